"""Argument types shared by the retail tools: bounded strings and the shapes of list arguments."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from .rules import MAX_LINE_QUANTITY

CustomerId = Annotated[str, Field(description="The customer's id, such as 'cus_0123456'.", max_length=40)]
OrderId = Annotated[str, Field(description="The order id, such as '#W0123456' (with the leading '#W').", max_length=40)]
ProductId = Annotated[str, Field(description="The product id, such as 'prod_012345'.", max_length=40)]
PaymentMethodId = Annotated[
    str, Field(description="A payment method id of the customer, such as 'pm_0123456'.", max_length=40)
]
OptionalPaymentMethodId = Annotated[
    str | None,
    Field(
        description="The customer's payment method that pays or receives any price difference, such as "
        "'pm_0123456'. Required when the new items cost a different amount.",
        max_length=40,
    ),
]
Line1 = Annotated[str, Field(description="Street address, such as '123 Main St'.", min_length=3, max_length=120)]
Line2 = Annotated[str, Field(description="Apartment, suite or unit; empty if none.", max_length=60)]
City = Annotated[str, Field(description="City.", min_length=2, max_length=60)]
State = Annotated[str, Field(description="Two-letter US state code, such as 'CA'.", pattern=r"^[A-Z]{2}$")]
Zip = Annotated[str, Field(description="Five-digit US ZIP code, such as '94107'.", pattern=r"^\d{5}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ItemQuantity(_Strict):
    variant_id: str = Field(description="The variant to buy, such as 'var_01234567'.", max_length=40)
    quantity: int = Field(default=1, ge=1, le=MAX_LINE_QUANTITY, description="How many units.")


class ItemChange(_Strict):
    item_id: str = Field(description="The order line to change, such as 'itm_01234567'.", max_length=40)
    new_variant_id: str = Field(description="The variant of the same product to switch to.", max_length=40)


class ExchangeLine(_Strict):
    item_id: str = Field(description="The delivered order line to exchange, such as 'itm_01234567'.", max_length=40)
    new_variant_id: str = Field(description="The variant of the same product to receive instead.", max_length=40)
    quantity: int | None = Field(
        default=None, ge=1, le=MAX_LINE_QUANTITY, description="How many units of the line; all of them if omitted."
    )


class ReturnLine(_Strict):
    item_id: str = Field(description="The delivered order line to return, such as 'itm_01234567'.", max_length=40)
    quantity: int | None = Field(
        default=None, ge=1, le=MAX_LINE_QUANTITY, description="How many units of the line; all of them if omitted."
    )

"""Fixtures for the airline world's tests: a fresh small-scale episode per test, and helpers that
find test data by querying the seeded database instead of hard-coding ids."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from mcpsim_worlds.airline import world as airline_world

from mcpsim.testing._driver import WorldDriver, world_fixtures

EPOCH = "2026-05-15T09:00:00+00:00"

# Free checked bags per passenger, by membership, then fare ("basic") or cabin.
FREE = {
    "regular": {"basic": 0, "economy": 1, "premium": 2, "business": 2},
    "silver": {"basic": 1, "economy": 1, "premium": 2, "business": 3},
    "gold": {"basic": 1, "economy": 2, "premium": 3, "business": 3},
    "platinum": {"basic": 2, "economy": 2, "premium": 3, "business": 4},
}


class Desk(WorldDriver):
    """An airline episode plus the queries the tests keep needing."""

    FREE = FREE

    def seats(self, flight_id: str, cabin: str) -> int:
        return self.value(f"SELECT seats_{cabin} FROM flights WHERE id = ?", flight_id)

    def balance(self, method_id: str) -> int:
        return self.value("SELECT balance_cents FROM payment_methods WHERE id = ?", method_id)

    def reservation(self, reservation_id: str) -> dict[str, Any]:
        return self.row("SELECT * FROM reservations WHERE id = ?", reservation_id)

    def payments(self, reservation_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        rows = self.rows("SELECT * FROM payments WHERE reservation_id = ? ORDER BY rowid", reservation_id)
        return [r for r in rows if kind is None or r["kind"] == kind]

    def net_paid(self, reservation_id: str) -> int:
        return sum(p["amount_cents"] * (1 if p["kind"] == "charge" else -1) for p in self.payments(reservation_id))

    # -- finding and arranging test data -------------------------------------------------------

    def user(self, membership: str = "regular") -> dict[str, Any]:
        """A user of this tier with a credit card that has not expired (the tier is set if needed)."""
        user = self.row(
            "SELECT u.* FROM users u JOIN payment_methods p ON p.user_id = u.id AND p.kind = 'credit_card' "
            "AND p.exp_year >= 2027 ORDER BY u.membership = ? DESC, u.id LIMIT 1",
            membership,
        )
        if user["membership"] != membership:
            self.arrange("UPDATE users SET membership = ? WHERE id = ?", membership, user["id"])
            user["membership"] = membership
        return user

    def card(self, user_id: str) -> str:
        return self.value(
            "SELECT id FROM payment_methods WHERE user_id = ? AND kind = 'credit_card' AND exp_year >= 2027 "
            "ORDER BY id LIMIT 1",
            user_id,
        )

    def give(self, user_id: str, kind: str, cents: int, method_id: str, **extra: Any) -> str:
        """Give the user a gift card or certificate (arranged outside any tool call)."""
        columns = {
            "id": method_id,
            "user_id": user_id,
            "kind": kind,
            "balance_cents": cents,
            "status": "active",
            "created_at": "2026-01-01T00:00:00+00:00",
            **extra,
        }
        if kind == "certificate":
            columns.setdefault("expires_on", "2026-12-31")
            columns.setdefault("source", "goodwill")
        names = ", ".join(columns)
        self.arrange(
            f"INSERT INTO payment_methods ({names}) VALUES ({', '.join('?' for _ in columns)})", *columns.values()
        )
        return method_id

    def _scheduled(self, where: str, *params: Any, min_seats: int) -> dict[str, Any]:
        """The first scheduled flight (by date, then id) matching `where`, with `min_seats` seats in every cabin."""
        return self.row(
            f"SELECT * FROM flights WHERE status = 'scheduled' AND {where} "
            "AND seats_economy >= ? AND seats_premium >= ? AND seats_business >= ? ORDER BY date, id LIMIT 1",
            *params,
            *[min_seats] * 3,
        )

    def future_flight(
        self, *, min_seats: int = 4, cabin: str = "economy", days: int = 3, exclude: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """A scheduled flight at least `days` days ahead with seats in every cabin."""
        marks = ", ".join("?" for _ in exclude) or "''"
        where = f"scheduled_departure > datetime(?, ?) AND id NOT IN ({marks})"
        return self._scheduled(where, EPOCH, f"+{days} days", *exclude, min_seats=min_seats)

    def alternative(self, flight: dict[str, Any], min_seats: int = 4) -> dict[str, Any]:
        """Another scheduled flight on the same route, a later day, with seats in every cabin."""
        where = "origin = ? AND destination = ? AND date > ?"
        return self._scheduled(where, flight["origin"], flight["destination"], flight["date"], min_seats=min_seats)

    def return_flight(self, outbound: dict[str, Any], min_seats: int = 4) -> dict[str, Any]:
        """The first scheduled flight back, leaving a day or more after `outbound` lands."""
        where = "origin = ? AND destination = ? AND scheduled_departure > datetime(?, '+1 day')"
        return self._scheduled(
            where, outbound["destination"], outbound["origin"], outbound["scheduled_arrival"], min_seats=min_seats
        )

    def book(
        self,
        user: dict[str, Any],
        flights: list[dict[str, Any]],
        *,
        cabin: str = "economy",
        fare: str = "standard",
        passengers: int = 1,
        bags: int = 0,
        insurance: bool = False,
        payments: list[dict[str, Any]] | None = None,
    ) -> Any:
        """Book through the tool, paying everything with the user's card unless told otherwise."""
        people = [
            {"first_name": f"Pax{i}", "last_name": user["last_name"], "date_of_birth": f"198{i}-01-0{i + 1}"}
            for i in range(passengers)
        ]
        refs = [{"flight_number": f["flight_number"], "date": f["date"]} for f in flights]
        if payments is None:
            quote = self.quote_total(user, flights, cabin, fare, passengers, bags, insurance)
            payments = [{"payment_method_id": self.card(user["id"]), "amount": quote / 100}]
        return self.ok(
            "book_reservation",
            user_id=user["id"],
            flights=refs,
            cabin=cabin,
            fare=fare,
            passengers=people,
            payments=payments,
            checked_bags=bags,
            insurance=insurance,
        )

    def quote_total(
        self,
        user: dict[str, Any],
        flights: list[dict[str, Any]],
        cabin: str,
        fare: str,
        passengers: int,
        bags: int,
        insurance: bool,
    ) -> int:
        """The booking total in cents, computed independently of the tools."""
        per_pax = 0
        for f in flights:
            standard = f[f"price_{cabin}_cents"]
            per_pax += {
                "basic": int(standard * 0.8) // 100 * 100,
                "standard": standard,
                "flex": standard + {"economy": 6000, "premium": 9000, "business": 15000}[cabin],
            }[fare]
        free = self.FREE[user["membership"]]["basic" if fare == "basic" else cabin] * passengers
        return per_pax * passengers + max(0, bags - free) * 5000 + (3000 * passengers if insurance else 0)

    def age(self, reservation_id: str, hours: float) -> None:
        """Pretend the reservation was booked `hours` before the epoch."""
        booked = datetime.fromisoformat(EPOCH) - timedelta(hours=hours)
        self.arrange("UPDATE reservations SET created_at = ? WHERE id = ?", booked.isoformat(), reservation_id)


airline, desk, episode = world_fixtures(airline_world, Desk, names=("airline", "desk"))

"""The scripted user understands what people write (issue 28, item 6): state codes and names,
street and unit words in either form, month and weekday abbreviations, phone numbers in any
format, on real tasks of the worlds that confirm writes. Both ways: the same change written
another way gets a yes; another place, street or number gets a no."""

from __future__ import annotations

import pytest

from mcpsim.tasks import load_tasks
from mcpsim.tasks._dialogue import YES_REPLY, confirmation_reply

ADDRESS = ("retail", "return-and-update-address")  # ships to 55 Oak Lane, Wichita, KS 67202


@pytest.mark.parametrize(
    "where",
    [
        "55 Oak Ln, Wichita, Kansas 67202",
        "55 Oak Lane, Wichita, KS 67202",
        "55 Oak LANE, Wichita, Kan. 67202".replace("Kan.", "KS"),
        "55 Oak Ln., Wichita KS 67202",
    ],
)
def test_an_address_in_other_words_gets_a_yes(where):
    task = load_tasks(ADDRESS[0]).get(ADDRESS[1])
    assert confirmation_reply(f"Shall I update order #W5609979's shipping address to {where}?", task) == YES_REPLY


@pytest.mark.parametrize(
    "where",
    ["55 Oak Lane, Wichita, Texas 67202", "55 Elm Ln, Wichita, KS 67202", "55 Oak Lane, Topeka, KS 67202"],
)
def test_another_address_gets_a_no(where):
    task = load_tasks(ADDRESS[0]).get(ADDRESS[1])
    assert confirmation_reply(f"Shall I update order #W5609979's shipping address to {where}?", task) != YES_REPLY


@pytest.mark.parametrize("phone", ["(512) 555-0187", "512.555.0187", "+1 512 555 0187"])
def test_a_phone_number_in_any_format_gets_a_yes(phone):
    task = load_tasks("bank").get("update-email-and-phone")
    question = f"I'll update your phone number to {phone} and your email to heather.alexander.home@outlook.com. OK?"
    assert confirmation_reply(question, task) == YES_REPLY
    wrong = question.replace("0187", "0188")
    assert confirmation_reply(wrong, task) != YES_REPLY


@pytest.mark.parametrize("day", ["Mon", "Tue", "Thurs", "Sept", "Jun"])
def test_day_and_month_abbreviations_are_not_strange_names(day):
    task = load_tasks(ADDRESS[0]).get(ADDRESS[1])
    question = f"On {day} 5, shall I update order #W5609979's shipping address to 55 Oak Lane, Wichita, KS 67202?"
    assert confirmation_reply(question, task) == YES_REPLY

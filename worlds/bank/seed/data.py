"""Fixed reference data for the seed: merchants by category, banks with their (public) routing
numbers, employers' payroll names, payee kinds and US states."""

from __future__ import annotations

# category -> (merchants, (min, max) amount in cents)
MERCHANTS: dict[str, tuple[tuple[str, ...], tuple[int, int]]] = {
    "groceries": (
        (
            "Whole Foods Market",
            "Safeway",
            "Trader Joe's",
            "Kroger",
            "Costco Wholesale",
            "Aldi",
            "Publix",
            "H-E-B",
            "Wegmans",
        ),
        (1_250, 21_900),
    ),
    "dining": (
        (
            "Chipotle Mexican Grill",
            "Starbucks",
            "Olive Garden",
            "Panera Bread",
            "Shake Shack",
            "Domino's Pizza",
            "Sweetgreen",
            "The Cheesecake Factory",
            "DoorDash",
        ),
        (475, 9_800),
    ),
    "fuel": (("Shell", "Chevron", "ExxonMobil", "BP", "Costco Gas", "Speedway"), (2_400, 8_600)),
    "shopping": (
        (
            "Amazon.com",
            "Target",
            "Walmart",
            "Best Buy",
            "The Home Depot",
            "IKEA",
            "Macy's",
            "Nordstrom",
            "Lowe's",
            "Etsy",
        ),
        (999, 46_500),
    ),
    "travel": (
        (
            "Delta Air Lines",
            "United Airlines",
            "Marriott Hotels",
            "Hilton Hotels",
            "Uber",
            "Lyft",
            "Airbnb",
            "Southwest Airlines",
        ),
        (1_450, 89_000),
    ),
    "health": (("CVS Pharmacy", "Walgreens", "Rite Aid", "LabCorp"), (800, 12_500)),
    "entertainment": (("AMC Theatres", "Ticketmaster", "Steam Games", "Regal Cinemas", "Live Nation"), (1_200, 26_000)),
    "utilities": (("Verizon Wireless", "Comcast Xfinity", "PG&E", "AT&T", "T-Mobile", "Duke Energy"), (4_500, 23_000)),
}
CATEGORY_WEIGHTS = {
    "groceries": 26,
    "dining": 24,
    "fuel": 12,
    "shopping": 18,
    "travel": 5,
    "health": 6,
    "entertainment": 6,
    "utilities": 3,
}

# Monthly card subscriptions: merchant, category, amount in cents.
SUBSCRIPTIONS = (
    ("Netflix", "entertainment", 1_549),
    ("Spotify", "entertainment", 1_199),
    ("Apple.com/bill", "entertainment", 299),
    ("Hulu", "entertainment", 1_799),
    ("Planet Fitness", "health", 2_499),
    ("Amazon Prime", "shopping", 1_499),
    ("Disney+", "entertainment", 1_399),
    ("New York Times Digital", "entertainment", 2_500),
    ("Peloton Membership", "health", 4_400),
)

BANKS = (
    ("JPMorgan Chase Bank", "021000021"),
    ("Bank of America", "026009593"),
    ("Wells Fargo Bank", "121000248"),
    ("Citibank", "021000089"),
    ("U.S. Bank", "091000022"),
    ("PNC Bank", "043000096"),
    ("Capital One", "056073502"),
    ("TD Bank", "031101266"),
    ("Truist Bank", "061000104"),
    ("Fifth Third Bank", "042000314"),
    ("Citizens Bank", "011500120"),
    ("KeyBank", "041001039"),
    ("Regions Bank", "062000019"),
    ("Ally Bank", "124003116"),
    ("Navy Federal Credit Union", "256074974"),
)

# Payees that are businesses paid monthly: (name pattern, nickname, monthly amount range in cents).
BUSINESS_PAYEES = (
    ("{street} Apartments LLC", "Rent", (110_000, 310_000)),
    ("{last} Property Management", "Rent", (95_000, 280_000)),
    ("Bright Horizons Child Care", "Daycare", (85_000, 190_000)),
    ("{last} Family Dental", None, (15_000, 60_000)),
    ("{city} Auto Finance", "Car loan", (32_000, 65_000)),
)
PERSON_NICKNAMES = ("Mom", "Dad", "Sister", "Brother", "Roommate", "Landlord", "Babysitter", "Grandma", None, None)

STATES = (
    "AL",
    "AZ",
    "AR",
    "CA",
    "CO",
    "CT",
    "DE",
    "FL",
    "GA",
    "ID",
    "IL",
    "IN",
    "IA",
    "KS",
    "KY",
    "LA",
    "ME",
    "MD",
    "MA",
    "MI",
    "MN",
    "MS",
    "MO",
    "MT",
    "NE",
    "NV",
    "NH",
    "NJ",
    "NM",
    "NY",
    "NC",
    "ND",
    "OH",
    "OK",
    "OR",
    "PA",
    "RI",
    "SC",
    "SD",
    "TN",
    "TX",
    "UT",
    "VT",
    "VA",
    "WA",
    "WV",
    "WI",
    "WY",
)
EMAIL_DOMAINS = (
    "gmail.com",
    "gmail.com",
    "gmail.com",
    "yahoo.com",
    "outlook.com",
    "hotmail.com",
    "icloud.com",
    "aol.com",
    "proton.me",
)
ACCOUNT_NICKNAMES = ("Bills", "Household", "Vacation fund", "Emergency fund", "Joint spending", "Side business")

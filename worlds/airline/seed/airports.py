"""The airports Meridian Air can serve: real IATA codes, names and coordinates. Hubs come first;
a scale takes the first N."""

from __future__ import annotations

AIRPORTS: list[tuple[str, str, str, str, float, float]] = [
    # code, name, city, state, latitude, longitude
    ("ORD", "O'Hare International Airport", "Chicago", "IL", 41.9786, -87.9048),
    ("DFW", "Dallas/Fort Worth International Airport", "Dallas", "TX", 32.8968, -97.0380),
    ("ATL", "Hartsfield-Jackson Atlanta International Airport", "Atlanta", "GA", 33.6367, -84.4281),
    ("JFK", "John F. Kennedy International Airport", "New York", "NY", 40.6398, -73.7789),
    ("LAX", "Los Angeles International Airport", "Los Angeles", "CA", 33.9425, -118.4081),
    ("SFO", "San Francisco International Airport", "San Francisco", "CA", 37.6190, -122.3749),
    ("SEA", "Seattle-Tacoma International Airport", "Seattle", "WA", 47.4490, -122.3093),
    ("BOS", "Logan International Airport", "Boston", "MA", 42.3656, -71.0096),
    ("DEN", "Denver International Airport", "Denver", "CO", 39.8617, -104.6731),
    ("MIA", "Miami International Airport", "Miami", "FL", 25.7932, -80.2906),
    ("PHX", "Phoenix Sky Harbor International Airport", "Phoenix", "AZ", 33.4343, -112.0116),
    ("LAS", "Harry Reid International Airport", "Las Vegas", "NV", 36.0801, -115.1522),
    ("MSP", "Minneapolis-Saint Paul International Airport", "Minneapolis", "MN", 44.8820, -93.2218),
    ("DTW", "Detroit Metropolitan Wayne County Airport", "Detroit", "MI", 42.2124, -83.3534),
    ("PHL", "Philadelphia International Airport", "Philadelphia", "PA", 39.8719, -75.2411),
    ("CLT", "Charlotte Douglas International Airport", "Charlotte", "NC", 35.2140, -80.9431),
    ("IAH", "George Bush Intercontinental Airport", "Houston", "TX", 29.9844, -95.3414),
    ("MCO", "Orlando International Airport", "Orlando", "FL", 28.4294, -81.3090),
    ("EWR", "Newark Liberty International Airport", "Newark", "NJ", 40.6925, -74.1687),
    ("SAN", "San Diego International Airport", "San Diego", "CA", 32.7336, -117.1897),
    ("PDX", "Portland International Airport", "Portland", "OR", 45.5887, -122.5975),
    ("SLC", "Salt Lake City International Airport", "Salt Lake City", "UT", 40.7884, -111.9778),
    ("BNA", "Nashville International Airport", "Nashville", "TN", 36.1245, -86.6782),
    ("AUS", "Austin-Bergstrom International Airport", "Austin", "TX", 30.1945, -97.6699),
    ("DCA", "Ronald Reagan Washington National Airport", "Washington", "DC", 38.8521, -77.0377),
    ("MSY", "Louis Armstrong New Orleans International Airport", "New Orleans", "LA", 29.9934, -90.2580),
    ("RDU", "Raleigh-Durham International Airport", "Raleigh", "NC", 35.8776, -78.7875),
    ("STL", "St. Louis Lambert International Airport", "St. Louis", "MO", 38.7487, -90.3700),
    ("HNL", "Daniel K. Inouye International Airport", "Honolulu", "HI", 21.3187, -157.9225),
    ("ANC", "Ted Stevens Anchorage International Airport", "Anchorage", "AK", 61.1743, -149.9982),
    ("TPA", "Tampa International Airport", "Tampa", "FL", 27.9755, -82.5332),
    ("PIT", "Pittsburgh International Airport", "Pittsburgh", "PA", 40.4915, -80.2329),
]

HUBS = 3  # the first three airports: every other airport has flights to each of them

# (name, economy, premium, business) seats; the aircraft a route gets depends on its length.
AIRCRAFT = {
    "short": [("Embraer E175", 64, 8, 8), ("Airbus A220-300", 108, 12, 10)],
    "medium": [("Airbus A320", 120, 24, 12), ("Boeing 737-800", 132, 18, 16)],
    "long": [("Airbus A321neo", 150, 24, 16), ("Boeing 787-9", 200, 35, 28)],
}

EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "aol.com")
CARD_BRANDS = ("Visa", "Mastercard", "American Express", "Discover")
CARD_WEIGHTS = (50, 30, 12, 8)

"""The shop's assortment, as templates the seed function draws products and variants from.

A product is a line name plus a product type ("Summit" + "Hiking Backpack"); its variants are
combinations of the type's options. Prices are whole dollars (the seed makes them end in .99);
an option value may add to the price (a bigger size, more storage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple


class Axis(NamedTuple):
    name: str
    values: tuple[str, ...]
    surcharge: Mapping[str, int] = MappingProxyType({})  # dollars added to the base price by a value


class ProductType(NamedTuple):
    name: str
    category: str
    price: tuple[int, int]  # base price range in dollars
    axes: tuple[Axis, ...]
    blurb: str


COLORS = ("Black", "White", "Navy", "Heather Gray", "Olive", "Burgundy", "Sand", "Forest Green")
GADGET_COLORS = ("Black", "White", "Silver", "Midnight Blue", "Rose Gold")
APPAREL_SIZES = ("XS", "S", "M", "L", "XL", "XXL")
SHOE_SIZES = ("6", "7", "8", "9", "10", "11", "12", "13")

LINES = (
    "Classic", "Summit", "Urban", "Nova", "Aero", "Trail", "Essential", "Pro", "Harbor", "Zenith",
    "Vista", "Pioneer", "Metro", "Coastal", "Apex", "Horizon",
)  # fmt: skip

TYPES: tuple[ProductType, ...] = (
    ProductType("Cotton T-Shirt", "Apparel", (15, 35),
        (Axis("color", COLORS), Axis("size", APPAREL_SIZES, {"XXL": 2})),
        "A soft, breathable crew-neck tee in 100% combed cotton."),
    ProductType("Pullover Hoodie", "Apparel", (45, 80),
        (Axis("color", COLORS), Axis("size", APPAREL_SIZES, {"XXL": 3})),
        "A midweight fleece hoodie with a kangaroo pocket and lined hood."),
    ProductType("Rain Jacket", "Apparel", (80, 180),
        (Axis("color", ("Black", "Navy", "Yellow", "Red", "Olive")), Axis("size", APPAREL_SIZES)),
        "A waterproof, breathable shell that packs into its own pocket."),
    ProductType("Slim Jeans", "Apparel", (50, 110),
        (Axis("wash", ("Dark Indigo", "Medium Blue", "Light Wash", "Black")),
         Axis("waist", ("28", "30", "32", "34", "36", "38")), Axis("length", ("30", "32", "34"))),
        "Stretch denim jeans with a slim fit through the hip and thigh."),
    ProductType("Wool Beanie", "Apparel", (18, 35),
        (Axis("color", COLORS),),
        "A ribbed merino wool beanie that keeps warm without itching."),
    ProductType("Running Shoes", "Footwear", (80, 160),
        (Axis("color", ("Black/White", "Blue/Orange", "Gray/Volt", "All White")), Axis("size", SHOE_SIZES)),
        "Lightweight road running shoes with a responsive foam midsole."),
    ProductType("Leather Sneakers", "Footwear", (70, 140),
        (Axis("color", ("White", "Black", "Tan")), Axis("size", SHOE_SIZES)),
        "Minimal low-top sneakers in full-grain leather."),
    ProductType("Hiking Boots", "Footwear", (120, 220),
        (Axis("color", ("Brown", "Charcoal", "Olive")), Axis("size", SHOE_SIZES), Axis("width", ("Regular", "Wide"))),
        "Waterproof mid-height boots with a grippy lugged outsole."),
    ProductType("Wireless Headphones", "Electronics", (80, 300),
        (Axis("color", GADGET_COLORS), Axis("noise cancelling", ("No", "Yes"), {"Yes": 60})),
        "Over-ear Bluetooth headphones with 30-hour battery life."),
    ProductType("Wireless Earbuds", "Electronics", (50, 200),
        (Axis("color", GADGET_COLORS), Axis("charging case", ("USB-C", "Wireless"), {"Wireless": 20})),
        "True wireless earbuds with a pocketable charging case."),
    ProductType("Bluetooth Speaker", "Electronics", (40, 200),
        (Axis("color", ("Black", "Blue", "Red", "Green")), Axis("waterproof", ("No", "Yes"), {"Yes": 25})),
        "A portable speaker with room-filling sound and a 12-hour battery."),
    ProductType("Smart Watch", "Electronics", (150, 400),
        (Axis("color", GADGET_COLORS), Axis("case size", ("41mm", "45mm"), {"45mm": 30}),
         Axis("connectivity", ("GPS", "GPS + Cellular"), {"GPS + Cellular": 100})),
        "A fitness and health tracker with heart-rate, sleep and GPS tracking."),
    ProductType("Mechanical Keyboard", "Electronics", (70, 200),
        (Axis("switch", ("Linear", "Tactile", "Clicky")), Axis("layout", ("Full size", "Tenkeyless", "75%")),
         Axis("backlight", ("White", "RGB"), {"RGB": 20})),
        "A hot-swappable mechanical keyboard with PBT keycaps."),
    ProductType("Gaming Mouse", "Electronics", (30, 120),
        (Axis("color", ("Black", "White")), Axis("connection", ("Wired", "Wireless"), {"Wireless": 40})),
        "A lightweight mouse with a 26,000 DPI optical sensor."),
    ProductType("E-Reader", "Electronics", (100, 250),
        (Axis("storage", ("16GB", "32GB", "64GB"), {"32GB": 30, "64GB": 60}),
         Axis("ads", ("With ads", "No ads"), {"No ads": 20})),
        "A glare-free 7-inch e-ink reader with an adjustable warm light."),
    ProductType("Action Camera", "Electronics", (200, 450),
        (Axis("resolution", ("4K", "5.3K"), {"5.3K": 100}),
         Axis("bundle", ("Camera only", "Adventure kit"), {"Adventure kit": 80})),
        "A rugged, waterproof camera with image stabilization."),
    ProductType("Phone Case", "Electronics", (15, 45),
        (Axis("model", ("Phone 15", "Phone 15 Pro", "Phone 16", "Phone 16 Pro")),
         Axis("color", ("Clear", "Black", "Sage", "Blush"))),
        "A slim, drop-tested case with raised edges around the camera."),
    ProductType("Coffee Maker", "Home & Kitchen", (40, 180),
        (Axis("capacity", ("8 cups", "12 cups"), {"12 cups": 20}),
         Axis("color", ("Black", "Stainless Steel", "White"))),
        "A programmable drip coffee maker with a keep-warm plate."),
    ProductType("Electric Kettle", "Home & Kitchen", (30, 90),
        (Axis("material", ("Glass", "Stainless Steel", "Plastic")), Axis("capacity", ("1L", "1.7L"), {"1.7L": 10})),
        "A fast-boiling kettle with automatic shut-off."),
    ProductType("Chef's Knife", "Home & Kitchen", (40, 160),
        (Axis("blade length", ("6 inch", "8 inch", "10 inch"), {"8 inch": 15, "10 inch": 30}),
         Axis("handle", ("Wood", "Black Composite"))),
        "A forged high-carbon stainless steel knife, sharpened to 15 degrees."),
    ProductType("Desk Lamp", "Home & Kitchen", (25, 90),
        (Axis("color", ("Black", "White", "Brass")), Axis("bulb", ("LED", "Smart LED"), {"Smart LED": 20})),
        "An adjustable arm lamp with dimmable, flicker-free light."),
    ProductType("Throw Blanket", "Home & Kitchen", (30, 90),
        (Axis("color", ("Oatmeal", "Charcoal", "Dusty Rose", "Sage")), Axis("size", ("50x60", "60x80"), {"60x80": 20})),
        "A chunky knit blanket that is soft enough for everyday naps."),
    ProductType("Water Bottle", "Sports & Fitness", (20, 45),
        (Axis("color", ("Black", "White", "Teal", "Coral", "Lavender")),
         Axis("capacity", ("20oz", "32oz", "40oz"), {"32oz": 5, "40oz": 8})),
        "A vacuum-insulated bottle that keeps drinks cold for 24 hours."),
    ProductType("Yoga Mat", "Sports & Fitness", (30, 110),
        (Axis("color", ("Purple", "Black", "Blue", "Green")),
         Axis("thickness", ("4mm", "6mm", "8mm"), {"6mm": 10, "8mm": 15})),
        "A non-slip, cushioned mat for yoga and floor workouts."),
    ProductType("Adjustable Dumbbells", "Sports & Fitness", (150, 400),
        (Axis("max weight", ("25 lb", "50 lb", "90 lb"), {"50 lb": 100, "90 lb": 250}),),
        "A space-saving pair of dumbbells that adjust with a dial."),
    ProductType("Bicycle Helmet", "Sports & Fitness", (40, 150),
        (Axis("color", ("Matte Black", "White", "Red", "Blue")), Axis("size", ("S", "M", "L"))),
        "A ventilated road helmet with MIPS impact protection."),
    ProductType("Hiking Backpack", "Outdoor", (60, 200),
        (Axis("color", ("Black", "Slate Blue", "Rust", "Olive")),
         Axis("capacity", ("28L", "38L", "48L"), {"38L": 20, "48L": 40})),
        "A ventilated daypack with a rain cover and hydration sleeve."),
    ProductType("Camping Tent", "Outdoor", (120, 450),
        (Axis("capacity", ("2-person", "4-person", "6-person"), {"4-person": 80, "6-person": 160}),
         Axis("season", ("3-season", "4-season"), {"4-season": 90})),
        "A freestanding tent with color-coded poles for a fast pitch."),
    ProductType("Sleeping Bag", "Outdoor", (60, 250),
        (Axis("temperature rating", ("40F", "20F", "0F"), {"20F": 40, "0F": 90}), Axis("zipper", ("Left", "Right"))),
        "A mummy sleeping bag with synthetic insulation that stays warm when damp."),
    ProductType("Travel Backpack", "Bags & Accessories", (70, 220),
        (Axis("color", ("Black", "Gray", "Navy")), Axis("capacity", ("30L", "40L"), {"40L": 25})),
        "A carry-on sized backpack that opens like a suitcase."),
    ProductType("Laptop Sleeve", "Bags & Accessories", (20, 60),
        (Axis("size", ('13"', '14"', '16"'), {'16"': 5}), Axis("color", ("Black", "Gray", "Navy", "Tan"))),
        "A padded, water-resistant sleeve with a front accessory pocket."),
    ProductType("Leather Wallet", "Bags & Accessories", (30, 90),
        (Axis("style", ("Bifold", "Card Holder", "Trifold")), Axis("color", ("Black", "Brown", "Cognac"))),
        "A slim full-grain leather wallet with RFID blocking."),
    ProductType("Sunglasses", "Bags & Accessories", (60, 200),
        (Axis("frame", ("Black", "Tortoise", "Clear")),
         Axis("lens", ("Gray", "Green", "Polarized Gray"), {"Polarized Gray": 40})),
        "Classic acetate sunglasses with full UV400 protection."),
    ProductType("Office Chair", "Office", (150, 500),
        (Axis("color", ("Black", "Gray", "White")), Axis("armrests", ("Fixed", "Adjustable"), {"Adjustable": 50})),
        "An ergonomic mesh chair with adjustable lumbar support."),
    ProductType("Standing Desk", "Office", (300, 700),
        (Axis("top", ("Walnut", "Oak", "White", "Black")),
         Axis("width", ('48"', '60"', '72"'), {'60"': 60, '72"': 120})),
        "A dual-motor sit-stand desk with four height presets."),
    ProductType("Dotted Notebook", "Office", (12, 30),
        (Axis("cover", ("Black", "Navy", "Emerald", "Berry")), Axis("size", ("A5", "B5"), {"B5": 4})),
        "A lay-flat hardcover notebook with 120 gsm fountain-pen friendly paper."),
)  # fmt: skip

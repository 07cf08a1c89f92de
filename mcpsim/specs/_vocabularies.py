"""Words for the text fields a person reads (reasons, notes, titles, product names), by field name.
The seeder uses them in place of Faker's filler (sentence, word, bs, catch_phrase). A field's
variants are tried in order: the first whose `when` words name the world (its name's words) or
the field's entity wins; a variant without `when` is the default. A value is one of `patterns`
with each {slot} filled from `slots`, drawn from the world's own seeded random source."""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml


@cache
def vocabularies() -> dict[str, list[dict[str, Any]]]:
    """Field name -> its variants (`when`, `patterns`, `slots`)."""
    data: dict[str, list[dict[str, Any]]] = yaml.safe_load(VOCABULARIES)
    return data


# YAML, so a list of words stays one line (a Python literal would be one line per word).
VOCABULARIES = """\
reason:
  - when: [dental_practice, dentist, hygienist]
    patterns: ['{dental}', '{dental} ({side})']
    slots:
      dental: [Routine dental check-up, Scale and polish, Filling replacement, Toothache, Crown fitting,
          Wisdom tooth review, Sensitive teeth, Whitening consultation, Chipped tooth, Bleeding gums]
      side: [upper left, upper right, lower left, lower right]
  - when: [veterinary_clinic, vet, veterinarian, pet_owner]
    patterns: ['{care} for {pet}']
    slots:
      care: [Annual vaccination, Flea treatment, Dental check, Limping, Ear infection, Weight check,
          Neutering consultation, Skin irritation, Stitches removal]
      pet: [the dog, the cat, the rabbit, the puppy, the kitten, the guinea pig]
  - when: [salon, stylist]
    patterns: ['{salon}']
    slots:
      salon: [Cut and blow-dry, Full colour, Highlights, Beard trim, Manicure, Gel nails removal, Eyebrow shaping,
          Keratin treatment, Wash and style, Fringe trim, Balayage, Root touch-up]
  - when: [physiotherapy, physiotherapist, therapist]
    patterns: ['{physio} {stage}']
    slots:
      physio: [Lower back pain, Knee rehabilitation, Shoulder stiffness, Sprained ankle, Neck pain,
          Hamstring strain, Tennis elbow, Hip mobility]
      stage: [assessment, follow-up, exercise review, treatment]
  - when: [clinic, doctor, physician, patient]
    patterns: ['{visit} about {issue}', '{issue}']
    slots:
      visit: [Consultation, Check-up, Review, Appointment]
      issue: [a persistent cough, blood pressure, knee swelling, migraines, a skin rash, sleep problems,
          a repeat prescription, asthma, hay fever, test results, a sore throat]
  - when: [fine, penalty, fee, charge]
    patterns: ['Returned {days} days late', '{damage} on return', 'Lost {thing}', 'Missing {thing}']
    slots:
      days: ['2', '3', '4', '5', '6', '8', '10', '14']
      damage: [Scratches, Water damage, A cracked casing, A torn cover, A bent frame, A flat battery,
          A broken strap]
      thing: [item, charger, carry case, manual, lock, accessory kit, dust cover]
  - patterns: ['{generic}']
    slots:
      generic: [Requested by phone, Follow-up visit, Rescheduled at the customer's request, First visit,
          Annual review]
text:
  - when: [doctor, physician, dentist, hygienist, vet, veterinarian, stylist, therapist, physiotherapist,
      treatment_note]
    patterns: ['{seen}; {next}.']
    slots:
      seen: [Reported less pain since the last visit, Symptoms unchanged, Responded well to treatment,
          Asked about costs, Prefers morning appointments, Allergic to penicillin, Arrived ten minutes late]
      next: [review in two weeks, book a follow-up, continue the current plan, send a reminder,
          refer to a specialist, no further action]
  - when: [review, pitch, desk, room, car, camper, guest, driver, stay]
    patterns: ['{opinion}; {verdict}.']
    slots:
      opinion: [Spotless and quiet, Check-in was quick, A bit noisy at night, Great location,
          Staff were very helpful, Wi-Fi kept dropping, Smaller than the photos, Easy parking]
      verdict: [would book again, good value, will recommend it to friends, not worth the price,
          fine for a short stay]
  - when: [supplier, publisher, grower, manufacturer, wholesaler, card]
    patterns: ['{note}']
    slots:
      note: [Please leave it with a neighbour, Gift wrap it please, Happy birthday from all of us,
          Deliver after 5 pm, Ring the bell twice, Leave at the back door, Congratulations on the new job,
          Get well soon, Call before delivery]
  - patterns: ['{generic}']
    slots:
      generic: [Called the customer back, Waiting for a reply, Sent the paperwork by e-mail,
          Updated the contact details]
note:
  - when: [scan, checkpoint, update, parcel, load, consignment, move, courier, freight, logistics, moving_company]
    patterns: ['{scan}']
    slots:
      scan: [Left with a neighbour, Signed for at reception, Held at the depot, Address label damaged, Nobody home,
          Delivered to a safe place, Loaded onto the van, Awaiting customs clearance, Rerouted to the nearest depot]
  - when: [charge, reservation, stay, rental]
    patterns: ['{extra}']
    slots:
      extra: [Late checkout, Extra bed, Damage deposit, Cleaning fee, Fuel top-up, Early check-in,
          Additional driver, Parking pass, Towel hire]
  - patterns: ['{generic}']
    slots:
      generic: [Added at the front desk, Agreed by phone, Waived once before]
summary:
  - when: [travel_insurance, traveller, trip_cover, handler]
    patterns: ['{travel} {city}']
    slots:
      travel: [Delayed flight, Lost luggage, Cancelled hotel, Medical treatment, Missed connection, Stolen passport]
      city: [in Lisbon, in Rome, at Heathrow, in Barcelona, in Prague, at Schiphol, in Athens]
  - when: [warranty_claims, warranty, technician]
    patterns: ['{appliance} {fault}']
    slots:
      appliance: [Washing machine, Laptop, Fridge, Television, Dishwasher, Phone, Coffee machine, Vacuum cleaner]
      fault: [stopped working, will not turn on, makes a grinding noise, leaks water, has a flickering screen,
          overheats]
  - when: [expense_reimbursement, expense, receipt, approver]
    patterns: ['{expense} for {purpose}']
    slots:
      expense: [Taxi, Train ticket, Hotel night, Team lunch, Conference fee, Client dinner, Parking]
      purpose: [the client visit, the Berlin workshop, onboarding, the sales kickoff, the trade fair,
          the quarterly review]
  - patterns: ['{event} {place}']
    slots:
      event: [Water leak, Storm damage, Break-in, Rear-end collision, Stolen bicycle, Cracked windscreen,
          Burst pipe, Fire in the garage]
      place: [in the kitchen, at the front door, in the car park, on the motorway, at home, near the office,
          in the loft]
product:
  - when: [travel_insurance, trip_cover]
    patterns: ['{trip}']
    slots:
      trip: [Single trip Europe, Annual worldwide, Ski and winter sports, Backpacker long stay, Cruise cover,
          Business travel]
  - when: [warranty_claims, warranty]
    patterns: ['{years}-year warranty on {appliance}']
    slots:
      years: ['1', '2', '3', '5']
      appliance: [a washing machine, a laptop, a fridge, a television, a dishwasher, a phone, a coffee machine]
  - when: [expense_reimbursement, budget]
    patterns: ['{budget} budget {quarter}']
    slots:
      budget: [Travel, Training, Marketing, Office supplies, Client entertainment, Conference]
      quarter: [Q1, Q2, Q3, Q4]
  - patterns: ['{cover} insurance']
    slots:
      cover: [Home contents, Buildings, Motor comprehensive, Pet health, Landlord, Third-party motor, Bicycle]
title:
  - when: [document, receipt, photo]
    patterns: ['{doc}']
    slots:
      doc: [Repair estimate, Police report, Receipt, Photo of the damage, Invoice copy, Medical certificate,
          Booking confirmation, Proof of purchase, Boarding pass]
  - when: [library, bookstore, book, reader, author]
    patterns: ['The {noun} of {place}', '{adj} {noun}s', '{noun}s of {place}']
    slots:
      noun: [Lighthouse, Orchard, Cartographer, Winter, River, Garden, Stranger, Harbour, Clockmaker, Archive]
      place: [Lisbon, the North, Glass Street, the Valley, Marrow Bay, Seven Bridges]
      adj: [Silent, Borrowed, Hidden, Last, Paper, Northern]
  - when: [game_rental, game]
    patterns: ['{game}: {edition}']
    slots:
      game: [Star Harbour, Dungeon Kitchen, Tiny Racers, Castle Builders, Ocean Quest, Robot Garden, Pixel League]
      edition: [Deluxe Edition, Party Pack, Remastered, Family Edition, Starter Set]
  - when: [tool_library, tool]
    patterns: ['{brand} {tool}']
    slots:
      brand: [Makita, Bosch, DeWalt, Stanley, Ryobi, Einhell]
      tool: [cordless drill, hedge trimmer, circular saw, pressure washer, ladder, tile cutter, sander, jigsaw]
  - when: [equipment_checkout, device]
    patterns: ['{brand} {device}']
    slots:
      brand: [Dell, Lenovo, Canon, Sony, Apple, Epson]
      device: [laptop, camera kit, tablet, projector, tripod, microphone set]
  - when: [bike_share, bike]
    patterns: ['{bike} {n}']
    slots:
      bike: [City bike, E-bike, Cargo bike, Folding bike, Tandem]
      n: ['1', '2', '3', '4', '5', '6', '7', '8', '9']
  - when: [driving_school, lesson_block]
    patterns: ['{driving}']
    slots:
      driving: [Motorway driving, Night driving, Parallel parking, Roundabouts, Test preparation, First lessons,
          Town driving, Manual gears]
  - when: [language_school, tutor]
    patterns: ['{level} {language}']
    slots:
      level: [Beginner, Elementary, Intermediate, Advanced, Conversational]
      language: [Spanish, French, German, Italian, Japanese, Portuguese]
  - when: [summer_camp, counsellor, camp_week]
    patterns: ['{activity} week']
    slots:
      activity: [Sailing, Climbing, Drama, Robotics, Football, Art, Swimming, Nature]
  - when: [training_center, trainer, trainee]
    patterns: ['{topic} workshop']
    slots:
      topic: [Excel, Project management, Public speaking, First aid, Negotiation, Python, Customer service]
  - when: [section, class, course, instructor, teacher, student, learner]
    patterns: ['{subject} {year}']
    slots:
      subject: [Biology, Chemistry, History, Geography, Mathematics, English literature, Physics]
      year: [Year 9, Year 10, Year 11, Year 12, foundation, honours]
  - when: [gym_membership, package, membership]
    patterns: ['{tier} {access}']
    slots:
      tier: [Off-peak, Standard, Premium, Student, Family]
      access: [gym access, gym and pool, classes only, all clubs]
  - when: [software_licenses, edition, licence]
    patterns: ['{product} {edition}']
    slots:
      product: [DesignSuite, CodeDesk, LedgerPro, TeamChat, CloudVault]
      edition: [Starter, Business, Enterprise, Education]
  - when: [streaming_service, viewer]
    patterns: ['{stream} plan']
    slots:
      stream: [Basic, Standard HD, Premium 4K, Mobile, Family]
  - when: [telecom, line, usage]
    patterns: ['{data} SIM only', '{data} with handset']
    slots:
      data: [5GB, 20GB, 50GB, 100GB, Unlimited data]
  - when: [utilities, tariff, supply, reading]
    patterns: ['{tariff} tariff']
    slots:
      tariff: [Fixed 12-month, Variable, Green, Economy 7, Fixed 24-month]
  - patterns: ['{tier} plan']
    slots:
      tier: [Starter, Standard, Plus, Premium, Family]
name:
  - when: [florist, bouquet, grower]
    patterns: ['{colour} {flower} bouquet']
    slots:
      colour: [Red, White, Pink, Yellow, Mixed, Peach]
      flower: [rose, tulip, lily, peony, sunflower, carnation]
  - when: [grocery, shopper]
    patterns: ['{food} {size}']
    slots:
      food: [Oat milk, Sourdough loaf, Free-range eggs, Basmati rice, Greek yoghurt, Olive oil, Coffee beans]
      size: [1 kg, 500 g, 1 litre, 6 pack, 12 pack]
  - when: [hardware_store, part, manufacturer]
    patterns: ['{size} {part}']
    slots:
      size: [M6, M8, 10 mm, 25 mm, 2 m, 3 m]
      part: [wood screws, wall plugs, copper pipe, hinge set, cable ties, spirit level]
  - when: [pharmacy, medicine, wholesaler]
    patterns: ['{drug} {dose}']
    slots:
      drug: [Ibuprofen, Paracetamol, Loratadine, Omeprazole, Cetirizine, Vitamin D]
      dose: [200 mg tablets, 500 mg tablets, 10 mg tablets, 20 mg capsules, oral drops]
  - when: [bookstore, book, publisher]
    patterns: ['The {noun} of {place}', '{adj} {noun}s']
    slots:
      noun: [Lighthouse, Orchard, Cartographer, Winter, River, Garden, Stranger, Harbour]
      place: [Lisbon, the North, Glass Street, the Valley, Marrow Bay]
      adj: [Silent, Borrowed, Hidden, Last, Paper]
  - patterns: ['{item} ({size})']
    slots:
      item: [Desk lamp, Travel mug, Backpack, Notebook, Water bottle]
      size: [small, medium, large]
problem:
  - patterns: ['{fault} in the {room}']
    slots:
      fault: [Leaking tap, No hot water, Broken window latch, Mould on the ceiling, Blocked drain, Faulty socket,
          Radiator not heating, Door lock sticking, Damp patch]
      room: [kitchen, bathroom, bedroom, hallway, living room, shower room]
subject:
  - when: [city_services, resident, inspector]
    patterns: ['{civic} on {street}']
    slots:
      civic: [Pothole, Broken streetlight, Overflowing bin, Fly-tipping, Blocked drain, Graffiti, Fallen tree]
      street: [Mill Lane, Station Road, Park Avenue, High Street, Church Road, Victoria Street]
  - when: [facilities_requests, staff_member, work_order]
    patterns: ['{thing} in {room}']
    slots:
      thing: [Broken chair, Air conditioning too cold, Flickering light, Leaking sink, Jammed printer, Blinds stuck]
      room: [meeting room 2, the kitchen, reception, the second floor, the lab]
  - when: [it_helpdesk, employee, technician]
    patterns: ['{system} {symptom}']
    slots:
      system: [VPN, E-mail, Laptop, Printer, Password reset, Shared drive, Video calls]
      symptom: [not working, very slow, keeps disconnecting, access denied, needs setting up]
  - patterns: ['{issue} {order}']
    slots:
      issue: [Late delivery of, Refund for, Wrong item in, Damaged box in, Missing invoice for]
      order: [my last order, order from Tuesday, my subscription renewal, the March order]
body:
  - patterns: ['{step}; {next}.']
    slots:
      step: [Asked for a screenshot, Restarted the service, Checked the account, Escalated to the second line,
          Sent the replacement, Called the customer]
      next: [waiting for a reply, should be fixed now, will check again tomorrow, closing if no answer by Friday]
label:
  - patterns: ['{tag}']
    slots:
      tag: [urgent, billing, follow-up, hardware, access, refund, escalated, duplicate, waiting, vip, outage,
          onboarding]
course:
  - patterns: ['{course}']
    slots:
      course: [First aid at work, Fire safety, Manual handling, Food hygiene level 2, Data protection basics,
          Infection control, Forklift licence, Safeguarding, Working at height]
"""

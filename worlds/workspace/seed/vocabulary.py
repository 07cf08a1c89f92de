"""The words the filler is drawn from: departments and titles, time zones with their weights,
projects, document types, and templates for subjects, message lines and event titles."""

from __future__ import annotations

from ..rules import DOMAIN

DEPARTMENTS = {
    "Engineering": ["Software Engineer", "Senior Software Engineer", "Staff Engineer", "QA Engineer", "SRE"],
    "Product": ["Product Manager", "Senior Product Manager", "Product Analyst"],
    "Design": ["Product Designer", "UX Researcher", "Content Designer"],
    "Data": ["Data Engineer", "Data Analyst", "Analytics Engineer"],
    "Finance": ["Financial Analyst", "Accountant", "Payroll Specialist"],
    "Sales": ["Account Executive", "Sales Engineer", "Sales Development Rep"],
    "Marketing": ["Marketing Manager", "Content Marketer", "Growth Analyst"],
    "Operations": ["Operations Analyst", "Logistics Coordinator", "Procurement Specialist"],
    "Customer Success": ["Customer Success Manager", "Support Specialist", "Onboarding Specialist"],
    "People": ["People Partner", "Recruiter", "Talent Coordinator"],
    "Legal": ["Paralegal", "Contracts Manager"],
    "IT": ["IT Support Engineer", "Systems Administrator"],
}
ZONES = [
    ("Europe/London", 34),
    ("America/New_York", 14),
    ("America/Los_Angeles", 9),
    ("Europe/Berlin", 9),
    ("Asia/Kolkata", 9),
    ("America/Chicago", 6),
    ("Europe/Paris", 6),
    ("Asia/Tokyo", 5),
    ("Australia/Sydney", 5),
    ("America/Sao_Paulo", 3),
]
STARTS = ["08:00", "08:30", "09:00", "09:00", "09:30", "10:00"]
PROJECTS = [
    "Atlas",
    "Beacon",
    "Cobalt",
    "Dovetail",
    "Evergreen",
    "Falcon",
    "Granite",
    "Harbor",
    "Ion",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orchard",
]
DOC_TYPES = [
    ("Launch Plan", "document"),
    ("Retro Notes", "document"),
    ("Pricing Model", "spreadsheet"),
    ("Status Update", "document"),
    ("Kickoff Deck", "presentation"),
    ("Risk Register", "spreadsheet"),
    ("Requirements", "document"),
    ("Metrics Dashboard Export", "spreadsheet"),
    ("Architecture Overview", "pdf"),
    ("Customer Interviews", "document"),
    ("Roadmap Review", "presentation"),
    ("Budget Tracker", "spreadsheet"),
    ("Design Mockups", "image"),
    ("Contract Summary", "pdf"),
    ("Capacity Plan", "spreadsheet"),
]
FOLDERS = ["Projects", "Operations", "Shared", "Reports", "Planning", ""]

INTERNAL_SUBJECTS = [
    "{p} status update",
    "{p}: next steps",
    "Question about the {p} timeline",
    "{p} kickoff notes",
    "Feedback on the {p} draft",
    "{p} risks for this sprint",
    "Can you review the {p} numbers?",
    "{p} launch checklist",
    "Staffing for {p}",
    "{p} customer feedback summary",
    "Vendor quotes for {p}",
    "Reminder: {p} retro on {d}",
    "{p} dependencies on Operations",
]
INTERNAL_OPENERS = [
    "Hi {n},",
    "Hi {n}, quick one.",
    "Morning {n},",
    "Hey {n},",
    "{n},",
]
INTERNAL_LINES = [
    "I've updated the {p} tracker with this week's numbers; the delivery estimate moved by {k} days.",
    "Can you take a look before {d}? I'd like to close this out this week.",
    "The main open question is still the vendor lead time, currently {k} weeks.",
    "Finance signed off on the revised estimate, so we're good to go.",
    "We're waiting on Legal for the last clause; I'll chase them tomorrow.",
    "I moved the review to {d} so that everyone can make it.",
    "Numbers look fine to me, a couple of comments inline.",
    "Could you loop in whoever owns the warehouse integration?",
    "The customer asked for a short call next week to go through the rollout.",
    "Let's keep this on the agenda for the next ops sync.",
    "I'll share the updated doc once the figures are final.",
]
REPLIES = [
    "Thanks, that works for me.",
    "Makes sense. I'll update the plan.",
    "Agreed, let's go with that.",
    "Sounds good; I'll follow up with the team.",
    "Got it, thanks for the heads-up.",
    "I'd push back a little on the timeline, but fine for now.",
    "Done, see the latest version.",
]
EXTERNAL_SUBJECTS = [
    "Invoice {k}{k} from {c}",
    "{c}: quarterly business review",
    "Proposal for {p} support",
    "Meeting follow-up",
    "{c} service update",
    "Quote request #{k}{k}{k}",
    "Renewal reminder from {c}",
]
EXTERNAL_LINES = [
    "Please find our latest figures below; let us know if anything looks off.",
    "Following up on our conversation last week, we'd be glad to put together a proposal.",
    "Our invoice for last month is now due; payment terms are 30 days.",
    "We're rolling out a new portal next month and will send logins to your team.",
    "Could you confirm the delivery window for the next batch?",
    "Thanks again for your time on the call.",
]
NEWSLETTERS = [
    ("Freight Lines", "news@freightlines.com", "Freight Lines weekly: {p} rates and port delays"),
    ("Larkspur People Team", f"people@{DOMAIN}", "This month at Larkspur: {p} team spotlight"),
    ("SaaS Ops Digest", "hello@saasopsdigest.com", "Five metrics every ops lead should track"),
    ("Travel Desk", "noreply@travel-desk.com", "Your trip summary is ready"),
]
EVENT_TITLES = [
    "{p} sync",
    "{p} planning",
    "{p} review",
    "{p} standup",
    "1:1 {a} / {b}",
    "{p} demo",
    "{p} retro",
    "Interview: {p} candidate",
    "{p} budget check-in",
    "Customer call: {c}",
    "{p} design review",
    "Coffee chat",
]

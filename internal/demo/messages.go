package demo

// service is what a lead asks Northwind about: the form's "service"
// field, its landing page, and the range of a won deal's value in USD.
type service struct {
	name     string
	path     string
	min, max float64
	messages []string
}

var services = []service{
	{name: "Roof replacement", path: "/roof-replacement", min: 9000, max: 26000, messages: []string{
		"Our roof is about 20 years old and the shingles are starting to curl. Looking for a quote on a full replacement.",
		"Need a quote for a tear-off and new architectural shingles on a two-story house.",
		"We just bought the house and the inspector flagged the roof. How soon could you come out for an estimate?",
		"Interested in replacing our roof this spring. Do you offer financing?",
		"Getting three quotes for a new roof on a brick bungalow. Is metal an option?",
		"Water stains on the ceiling again. I think it's time for a new roof rather than another patch.",
	}},
	{name: "Storm damage repair", path: "/storm-damage", min: 1500, max: 12000, messages: []string{
		"Hail last night took a bunch of shingles off and there's a leak in the upstairs bedroom.",
		"A tree branch came down on the garage roof in the storm. Need someone to look at it ASAP.",
		"The insurance adjuster comes Thursday. Can you meet them and look at the storm damage?",
		"Wind lifted part of the flashing around the chimney. It's dripping into the attic.",
		"Several shingles are in the yard after the storm. Can you check the roof and send an estimate?",
	}},
	{name: "Roof inspection", path: "/free-inspection", min: 400, max: 3500, messages: []string{
		"I'd like to book the free roof inspection. Weekday mornings work best.",
		"Can you check our flat roof? Water pools after every rain.",
		"Selling the house this summer and want the roof inspected first.",
		"Some granules in the gutters and a soft spot near the vent. Could you take a look?",
	}},
	{name: "Gutter guards", path: "/gutters", min: 1200, max: 4500, messages: []string{
		"Looking for gutter guards on a ranch house, about 160 feet of gutter.",
		"Our gutters overflow every time it rains. Interested in guards and maybe new downspouts.",
		"How much for seamless gutters and guards on a two-story colonial?",
	}},
}

// commercialMessages are what property managers and businesses write.
var commercialMessages = []string{
	"We manage a 24-unit building and need a quote for the flat roof over building B.",
	"Our office roof leaks at two skylights. Do you do commercial work?",
	"Looking for a contractor for annual roof maintenance on three properties.",
	"The HOA board wants bids for replacing the roofs on 12 townhomes next year.",
}

// followUps are what someone writes when they write in again.
var followUps = []string{
	"Following up on my request from the other day. Still need a quote.",
	"Sent the form earlier this week but haven't heard back. Can someone call me?",
	"Just checking you got my message about the roof.",
}

// vendorPitches are messages the vendor_pitch signal catches.
var vendorPitches = []string{
	"Hi, I noticed your website is not on the first page of Google. We offer affordable SEO services for roofing companies. Can I send you a proposal?",
	"Hello, we are a digital marketing agency that helps contractors generate more leads. Reply STOP to opt out.",
	"We provide link building and guest posting on high domain authority sites. Price list attached.",
	"Would you be interested in web design services? We can redesign your website for a flat fee.",
}

// jobApplications are messages the job_application signal catches.
var jobApplications = []string{
	"Hello, I am looking for a job as a roofer. I have 6 years of experience. My resume is attached.",
	"Are there any job openings on your crew? I would love to join your team.",
	"I am writing to apply for a job as an estimator. Please see my resume attached.",
}

// botMessages are what form-filling bots post.
var botMessages = []string{
	"Wow, amazing site!!! Best prices here http://cheap-deals.example/?ref=roof",
	"Hello. Crypto investment opportunity, 300% monthly return, contact me on telegram.",
	"nice post thanks",
}

var timelines = []string{"As soon as possible", "Within a month", "In the next 3 months", "Just researching"}

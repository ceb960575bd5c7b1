package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/models"
)

// site is Northwind's website, where the forms are.
const site = "https://www.northwindroofing.example"

// campaign is an ad campaign that sends visitors to a service's page.
type campaign struct {
	source, medium, name string
	service              int // index in services
	weight               float64
}

var campaigns = []campaign{
	{"facebook", "paid_social", "spring-roof-replacement", 0, 0.35},
	{"facebook", "paid_social", "storm-damage-repair", 1, 0.25},
	{"instagram", "paid_social", "free-roof-inspection", 2, 0.25},
	{"google", "cpc", "gutter-guards", 3, 0.15},
}

// kind is what sort of submission a lead is.
type kind int

const (
	genuine    kind = iota
	partial         // a form left half filled in
	bot             // honeypot filled in, in under a second
	vendor          // a vendor's sales pitch
	applicant       // a job application
	fakePhone       // a made-up phone number
	disposable      // a throwaway mailbox
	hasty           // a person's autofilled form, sent in under 2 s
)

// submission is one synthetic form post: the request and the service it
// asks about, which sets the deal's size.
type submission struct {
	req     capture.Request
	service service
	kind    kind
}

// gen makes synthetic submissions.
type gen struct {
	rng    *rand.Rand
	people *people
}

func newGen(rng *rand.Rand) *gen { return &gen{rng: rng, people: newPeople(rng)} }

func (g *gen) kind() kind {
	switch r := g.rng.Float64(); {
	case r < 0.03:
		return bot
	case r < 0.06:
		return vendor
	case r < 0.08:
		return applicant
	case r < 0.10:
		return fakePhone
	case r < 0.115:
		return disposable
	case r < 0.13:
		return hasty
	case r < 0.18:
		return partial
	}
	return genuine
}

// submission makes one form post at at.
func (g *gen) submission(at time.Time) submission {
	k := g.kind()
	r := g.rng
	work := k == vendor || k == genuine && r.Float64() < 0.22
	p := g.people.person(work)
	s := submission{kind: k, service: services[r.IntN(len(services))]}
	q := &s.req
	q.CreatedAt = at.UTC().Format(time.RFC3339)
	q.FirstName, q.LastName, q.Email, q.Phone = p.first, p.last, p.email, p.phone
	q.City, q.State, q.Zip, q.Country = p.place.city, "IL", p.place.zip, "US"

	if k == genuine && r.Float64() < 0.3 {
		g.instantForm(&s, p)
		return s
	}
	g.website(&s, at)
	q.Fields = map[string]any{"service": s.service.name, "property_type": propertyType(r, work)}
	q.FillSeconds = ptr(math.Round((18+r.ExpFloat64()*70)*10) / 10)
	switch {
	case r.Float64() < 0.2:
		// No message: the form's message box is optional.
	case work:
		q.Message = pick(r, commercialMessages)
	default:
		q.Message = pick(r, s.service.messages)
	}

	switch k {
	case partial:
		// Left after the first step: a name and one way to reach them.
		q.Partial, q.Message, q.FillSeconds, q.LastName = true, "", nil, ""
		q.City, q.Zip = "", ""
		delete(q.Fields, "property_type")
		if r.IntN(2) == 0 {
			q.Email = ""
		} else {
			q.Phone = ""
		}
	case bot:
		q.FirstName, q.LastName = "Robert"+token(r, 3), ""
		q.Email = fmt.Sprintf("%s@%s", token(r, 10), pick(r, freeMail))
		q.Phone, q.City, q.Zip = "", "", ""
		q.Honeypot = pick(r, []string{"http://cheap-deals.example", "1", "seo"})
		q.FillSeconds = ptr(math.Round((0.3+r.Float64())*10) / 10)
		q.Message = pick(r, botMessages)
	case vendor:
		q.Message = pick(r, vendorPitches)
	case applicant:
		q.Message = pick(r, jobApplications)
	case fakePhone:
		q.Phone = pick(r, []string{"(312) 555-0142", "1111111111", "123-456-7890", "773-555-0199"})
		q.Email = ""
	case disposable:
		q.Email = g.people.email(p.first, p.last, pick(r, disposableMail))
	case hasty:
		q.FillSeconds = ptr(math.Round((0.8+r.Float64())*10) / 10)
	}
	return s
}

// website fills in what a website form posts: the page with its
// campaign's UTM parameters and, for paid social, Meta's click id and
// cookies; the visitor's IP and user agent.
func (g *gen) website(s *submission, at time.Time) {
	r, q := g.rng, &s.req
	q.Source = string(models.SourceWebsite)
	page := site + "/contact"
	social := false
	if r.Float64() < 0.75 {
		c := g.campaign()
		s.service = services[c.service]
		v := url.Values{"utm_source": {c.source}, "utm_medium": {c.medium}, "utm_campaign": {c.name}}
		if c.medium == "paid_social" {
			social = true
			fbclid := "IwAR" + token(r, 52)
			v.Set("fbclid", fbclid)
			clicked := at.Add(-time.Duration(30+r.IntN(900)) * time.Second)
			if r.Float64() < 0.8 {
				q.FBC = fmt.Sprintf("fb.1.%d.%s", clicked.UnixMilli(), fbclid)
			} else {
				q.FBCLID = fbclid // the cookie was blocked: fbc is rebuilt
			}
		}
		page = site + s.service.path + "?" + v.Encode()
	}
	q.EventSourceURL = page
	if r.Float64() < 0.85 {
		firstSeen := at.Add(-time.Duration(r.IntN(20*24*3600)) * time.Second)
		q.FBP = fmt.Sprintf("fb.1.%d.%s", firstSeen.UnixMilli(), digits(r, 10))
	}
	if r.Float64() < 0.95 {
		q.ClientIP = g.people.ip()
		q.ClientUserAgent = pick(r, userAgents)
		if social && r.Float64() < 0.7 {
			q.ClientUserAgent = pick(r, inAppAgents)
		}
	}
}

// instantForm fills in what a Meta Instant Form lead carries: Meta's lead
// id and the form's questions, no page and no cookies.
func (g *gen) instantForm(s *submission, p person) {
	r, q := g.rng, &s.req
	q.Source = string(models.SourceInstantForm)
	q.MetaLeadID = digits(r, 15+r.IntN(3))
	q.Fields = map[string]any{"service": s.service.name, "property_type": propertyType(r, p.work), "timeline": pick(r, timelines)}
}

// campaign picks a campaign by its weight.
func (g *gen) campaign() campaign {
	x := g.rng.Float64()
	for _, c := range campaigns {
		if x < c.weight {
			return c
		}
		x -= c.weight
	}
	return campaigns[len(campaigns)-1]
}

func propertyType(r *rand.Rand, work bool) string {
	if work && r.Float64() < 0.7 || r.Float64() < 0.1 {
		return "Commercial"
	}
	return "Residential"
}

// followUp is the same person as req writing in again at at.
func (g *gen) followUp(req capture.Request, at time.Time) capture.Request {
	q := capture.Request{
		FirstName: req.FirstName, LastName: req.LastName, Email: req.Email, Phone: req.Phone,
		City: req.City, State: req.State, Zip: req.Zip, Country: req.Country,
		Source: string(models.SourceWebsite), EventSourceURL: site + "/contact",
		Message: pick(g.rng, followUps), CreatedAt: at.UTC().Format(time.RFC3339),
		FillSeconds: ptr(math.Round((15+g.rng.Float64()*40)*10) / 10),
		ClientIP:    g.people.ip(), ClientUserAgent: pick(g.rng, userAgents),
	}
	return q
}

// dealValue is a won deal's value for service: whole tens of dollars in
// its range.
func (g *gen) dealValue(s service) float64 {
	return math.Round((s.min+g.rng.Float64()*(s.max-s.min))/10) * 10
}

func ptr[T any](v T) *T { return &v }

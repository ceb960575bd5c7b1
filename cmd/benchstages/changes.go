package main

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// change is one stage change of a run, of a lead benchkit.SeedLeads made:
// as a CRM sends them, most by the lead's external id, some by its email,
// qualified, booked or won (with the deal's value and currency), half with
// the CRM's own id of the change.
type change struct {
	lead     int // the seeded lead's number: external id hist-N, email leadN@example.com
	byEmail  bool
	stage    string
	value    float64 // for won only
	currency string
	changeID string // "" for none
}

// runID keeps change ids of runs apart.
var runID = strings.ToLower(rand.Text()[:6])

// nthChange is change k (0-based) of a run over an account of leads leads:
// a change k < leads is of another lead than every other, the leads spread
// over the account's history.
func nthChange(k, leads int) change {
	stride := 7919 // prime: k*stride covers every lead once unless leads is a multiple
	for leads%stride == 0 {
		stride += 2
	}
	c := change{lead: 1 + int((int64(k)*int64(stride))%int64(leads)), byEmail: k%5 == 4}
	switch m := k % 10; {
	case m < 5:
		c.stage = "qualified"
	case m < 8:
		c.stage = "booked"
	default:
		c.stage = "won"
		c.value = float64(250 * (1 + k%40))
		c.currency = []string{"USD", "EUR"}[k%2]
	}
	if k%2 == 0 {
		c.changeID = fmt.Sprintf("crm-%s-%d", runID, k)
	}
	return c
}

func (c change) externalID() string { return fmt.Sprintf("hist-%d", c.lead) }
func (c change) email() string      { return fmt.Sprintf("lead%d@example.com", c.lead) }

package rule

import (
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// PreviewExamples is how many of the newest matched, and of the newest
// unmatched, leads a preview keeps.
const PreviewExamples = 10

// Preview counts what a rule would have done with a stream of leads: the
// rule form's live preview. It asks the Matcher exactly what capture asks
// it, so a lead it counts as matched is a lead capture would have queued.
// Add each lead, then read Result. It holds no lead, only counts and the
// few examples it copies. A Preview is not safe for concurrent use.
type Preview struct {
	// CanSend decide, one for each of the rule's destinations, whether
	// the event of a match could be sent there now (v is the lead's view,
	// now the preview's time). The caller asks the check that holds events
	// back when they are queued (decide.Sendable), which this package,
	// under it, cannot import. Set them before the first Add.
	CanSend []func(l *models.Lead, v *Lead, now time.Time) bool

	m     *Matcher
	now   time.Time
	view  Lead
	held  []bool
	items []bool // each item's verdict on the lead being counted
	res   PreviewResult
}

// PreviewResult is what a Preview counted.
type PreviewResult struct {
	// Leads is every lead added; Matched how many the rule matches.
	Leads   int
	Matched int
	// MatchedJunk and MatchedPartial are the matches that are junk (the
	// rule requires junk) or partial leads.
	MatchedJunk    int
	MatchedPartial int
	// Leads ruled out before any condition (Matcher.Match's gates): junk
	// leads of a rule that does not name junk, partial leads of a rule for
	// completed ones, completed leads of an automatic_partial rule.
	OutJunk      int
	OutPartial   int
	OutCompleted int
	// Conditions counts each plain condition of the rule, in order, over
	// the leads past the gates (Considered), and Groups each group.
	Conditions []ConditionCount
	Groups     []GroupCount
	// Keys counts the matches that carry each match key.
	Keys KeyCounts
	// Sendable is how many matches could be sent now to each destination,
	// as its CanSend decides, in CanSend's order.
	Sendable []int
	// Matches and Misses are the newest matched and unmatched leads, newest
	// first, at most PreviewExamples of each.
	Matches []PreviewLead
	Misses  []PreviewLead
}

// Considered is how many leads got past the gates to the conditions.
func (r PreviewResult) Considered() int {
	return r.Leads - r.OutJunk - r.OutPartial - r.OutCompleted
}

// ConditionCount is what one condition did over the leads past the gates.
type ConditionCount struct {
	Condition Condition
	// Holds is how many leads the condition holds for, on its own: the
	// others (Considered - Holds) it rules out on its own.
	Holds int
	// Alone is how many leads this condition alone decided. In an "and"
	// rule: the leads it rules out while every other condition holds,
	// which would match without it. In an "or" rule: the leads it lets in
	// while no other condition holds, which would not match without it.
	Alone int
}

// GroupCount is what one group did over the leads past the gates: as an
// item of the rule, beside its plain conditions (Holds and Alone, as a
// ConditionCount's), and each of its conditions within the group (their
// Alone: the leads the group decides by that condition alone).
type GroupCount struct {
	Group      Group
	Holds      int
	Alone      int
	Conditions []ConditionCount
}

// KeyCounts counts leads by the match keys they carry: the hashed email
// and phone, the fbc cookie or an fbclid to rebuild it from, and the
// others as they were captured.
type KeyCounts struct {
	Email      int // em
	Phone      int // ph
	FBC        int
	FBP        int
	ExternalID int
	IP         int // client_ip_address
	UserAgent  int // client_user_agent
}

// PreviewLead is an example lead of a preview, with why the rule matched
// it or not (Matcher.Explain).
type PreviewLead struct {
	ID        int64
	CreatedAt time.Time
	Email     string
	Phone     string
	Name      string
	Junk      bool
	Partial   bool
	Why       string
}

// NewPreview starts a preview of m at now, the time CanSend judges the
// matches at.
func NewPreview(m *Matcher, now time.Time) *Preview {
	p := &Preview{m: m, now: now}
	p.res.Conditions = counts(m.spec.Conditions)
	for _, g := range m.spec.Groups {
		p.res.Groups = append(p.res.Groups, GroupCount{Group: g, Conditions: counts(g.Conditions)})
	}
	p.items = make([]bool, m.items())
	return p
}

func counts(cs []Condition) []ConditionCount {
	out := make([]ConditionCount, len(cs))
	for i, c := range cs {
		out[i].Condition = c
	}
	return out
}

// Add counts one lead. l is read during the call only: the caller may
// reuse it for the next lead.
func (p *Preview) Add(l *models.Lead) {
	p.view.Reset(l)
	var r Result
	r, p.held = p.m.MatchEach(&p.view, p.held)
	res := &p.res
	res.Leads++
	switch r.Reason {
	case ReasonJunk:
		res.OutJunk++
	case ReasonPartial:
		res.OutPartial++
	case ReasonCompleted:
		res.OutCompleted++
	default:
		p.countConditions()
	}
	if !r.Matched {
		p.res.Misses = p.example(p.res.Misses, l, r)
		return
	}
	res.Matched++
	if l.Junk {
		res.MatchedJunk++
	}
	if l.Partial {
		res.MatchedPartial++
	}
	k := &res.Keys
	// fbc is sent as the cookie was, or rebuilt from the fbclid (capture
	// keeps the rebuilt one in the match keys, which the preview does not
	// parse).
	email, phone, fbc := l.EmailHash != "", l.PhoneHash != "", l.FBC != "" || l.FBCLID != ""
	externalID := l.ExternalID != nil && *l.ExternalID != ""
	k.Email += b2i(email)
	k.Phone += b2i(phone)
	k.FBC += b2i(fbc)
	k.FBP += b2i(l.FBP != "")
	k.ExternalID += b2i(externalID)
	k.IP += b2i(l.ClientIP != "")
	k.UserAgent += b2i(l.ClientUserAgent != "")
	if len(res.Sendable) != len(p.CanSend) {
		res.Sendable = make([]int, len(p.CanSend))
	}
	for i, can := range p.CanSend {
		if can(l, &p.view, p.now) {
			res.Sendable[i]++
		}
	}
	p.res.Matches = p.example(p.res.Matches, l, r)
}

// countConditions counts the verdicts of the rule's items, and of each
// group's conditions within it, on a lead past the gates, from p.held.
func (p *Preview) countConditions() {
	m := p.m
	for k := range p.items {
		p.items[k] = m.holds(k, p.held)
	}
	holds, alone := tally(m.or, p.items)
	for k := range p.items {
		h, a := b2i(holds(k)), b2i(alone(k))
		if k < m.plain {
			p.res.Conditions[k].Holds += h
			p.res.Conditions[k].Alone += a
			continue
		}
		gc := &p.res.Groups[k-m.plain]
		gc.Holds += h
		gc.Alone += a
		g := m.groups[k-m.plain]
		inHolds, inAlone := tally(g.or, p.held[g.from:g.to])
		for i := range gc.Conditions {
			gc.Conditions[i].Holds += b2i(inHolds(i))
			gc.Conditions[i].Alone += b2i(inAlone(i))
		}
	}
}

// tally reads the verdicts of a list joined by "and" or "or" (or): whether
// each holds, and whether it alone decides the list: in an "and" list the
// one that fails while the others hold, in an "or" list the one that
// holds while the others fail.
func tally(or bool, verdicts []bool) (holds, alone func(int) bool) {
	n := 0
	for _, ok := range verdicts {
		if ok {
			n++
		}
	}
	holds = func(i int) bool { return verdicts[i] }
	alone = func(i int) bool {
		if or {
			return n == 1 && verdicts[i]
		}
		return n == len(verdicts)-1 && !verdicts[i]
	}
	return holds, alone
}

// example adds l to list, the newest leads first, when it is among the
// PreviewExamples newest. Leads usually come newest first, so that past
// the first few this is one comparison.
func (p *Preview) example(list []PreviewLead, l *models.Lead, r Result) []PreviewLead {
	i := len(list)
	for i > 0 && newer(l, list[i-1]) {
		i--
	}
	if i >= PreviewExamples {
		return list
	}
	e := PreviewLead{ID: l.ID, CreatedAt: l.CreatedAt, Email: l.Email, Phone: l.Phone, Junk: l.Junk, Partial: l.Partial,
		Name: joinName(l.FirstName, l.LastName), Why: p.m.Explain(r)}
	if len(list) < PreviewExamples {
		list = append(list, PreviewLead{})
	}
	copy(list[i+1:], list[i:])
	list[i] = e
	return list
}

// newer orders leads as the preview lists them: by capture time, then id.
func newer(l *models.Lead, e PreviewLead) bool {
	if !l.CreatedAt.Equal(e.CreatedAt) {
		return l.CreatedAt.After(e.CreatedAt)
	}
	return l.ID > e.ID
}

func joinName(first, last string) string {
	switch {
	case first == "":
		return last
	case last == "":
		return first
	}
	return first + " " + last
}

// Result returns the counts so far.
func (p *Preview) Result() PreviewResult {
	r := p.res
	r.Conditions = slices.Clone(p.res.Conditions)
	r.Groups = slices.Clone(p.res.Groups)
	for i := range r.Groups {
		r.Groups[i].Conditions = slices.Clone(r.Groups[i].Conditions)
	}
	if len(p.CanSend) > 0 {
		r.Sendable = make([]int, len(p.CanSend))
		copy(r.Sendable, p.res.Sendable)
	}
	r.Matches = slices.Clone(p.res.Matches)
	r.Misses = slices.Clone(p.res.Misses)
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

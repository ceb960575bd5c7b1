package web

import (
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/views"
)

// leadRuleRows judges a lead by each enabled send rule of its account,
// with the matcher that decides its events: which match, and for the
// others what decided. An automatic rule that matches the lead now but
// whose event the lead lacks (evs) says why, and offers to apply it.
func (h *Handler) leadRuleRows(a models.Account, role models.Role, l models.Lead, rules []models.SendRule, datasets []models.Dataset,
	evs []models.Event) []views.LeadRuleRow {
	view := rule.NewLead(&l)
	rows := make([]views.LeadRuleRow, 0, len(rules))
	var held []bool
	for _, r := range rules {
		if !r.Enabled {
			continue // it decides nothing: matching it would only cost
		}
		if rule.Mode(r.Mode) == rule.Stage {
			continue // a stage mapping: its events show when the stage changes
		}
		dss := decide.Destinations(datasets, r)
		row := views.LeadRuleRow{ID: r.ID, Name: r.Name, Sends: modeOf(r.Mode).label, EventName: r.EventName,
			Dataset: destinationsLabel(datasets, r), Enabled: true, Manual: r.Mode == string(rule.Manual)}
		m, problems := rule.CompileRule(r, rule.Schema{Open: true})
		if len(problems) > 0 {
			row.Why = "the rule cannot be used: " + problems[0].String()
			rows = append(rows, row)
			continue
		}
		var res rule.Result
		res, held = m.MatchEach(view, held)
		row.Matched, row.Why = res.Matched, m.ExplainEach(res, held)
		switch {
		case res.Matched && row.Manual:
			row.Why = "sends when a person clicks: " + row.Why
		case res.Matched && rule.Mode(r.Mode).OnCapture():
			row.Event, row.NoEvent, row.ApplyURL = h.ruleEvents(a, role, l, r, rules, dss, evs)
		}
		rows = append(rows, row)
	}
	return rows
}

// ruleEvents says, for an automatic rule r that matches lead l, what
// became of its event at each of its destinations dss (ruleEvent): one
// note when they all say the same, else each destination's own.
func (h *Handler) ruleEvents(a models.Account, role models.Role, l models.Lead, r models.SendRule, rules []models.SendRule,
	dss []models.Dataset, evs []models.Event) (note string, noEvent bool, applyURL string) {
	var notes, alone []string
	for _, ds := range dss {
		n, no, apply := h.ruleEvent(a, role, l, r, rules, ds, evs)
		noEvent = noEvent || no
		if applyURL == "" {
			applyURL = apply
		}
		if n != "" {
			notes = append(notes, "To "+destinationLabel(ds)+": "+n)
			alone = append(alone, n)
		}
	}
	if len(alone) > 0 && len(alone) == len(dss) && len(slices.Compact(slices.Clone(alone))) == 1 {
		return alone[0], noEvent, applyURL
	}
	return strings.Join(notes, " "), noEvent, applyURL
}

// ruleEvent says, for an automatic rule r that matches lead l, what became
// of its event, when that is not plain: another rule made it first (one
// event for both), or the lead has none, or it did not reach Meta, and
// why (noEvent). applyURL is the rule's apply confirmation when applying
// would queue it and role may apply.
func (h *Handler) ruleEvent(a models.Account, role models.Role, l models.Lead, r models.SendRule, rules []models.SendRule,
	ds models.Dataset, evs []models.Event) (note string, noEvent bool, applyURL string) {
	id := capi.EventID(ds.PixelID, r.EventName, capi.RecordKey(l))
	i := slices.IndexFunc(evs, func(e models.Event) bool { return e.DatasetID == ds.ID && e.EventID == id })
	if i >= 0 {
		e := evs[i]
		if e.Origin == models.OriginRule && e.OriginID != nil && *e.OriginID != r.ID {
			owner := "a rule since deleted"
			if j := slices.IndexFunc(rules, func(o models.SendRule) bool { return o.ID == *e.OriginID }); j >= 0 {
				owner = rules[j].Name
			}
			return "One " + r.EventName + " event for both: " + owner + " made it first, and owns it.", false, ""
		}
		switch {
		case e.Status == models.EventDryRun:
			return "The " + r.EventName + " event was built, not sent: the dataset " + ds.Name + " is in dry-run mode.", true, ""
		case e.State() == models.EventHeldBack:
			return "The " + r.EventName + " event was held back: " + views.EventReason(e) + ". Its page in the send log says what to change.", true, ""
		case e.State() == models.EventFailed:
			return "The " + r.EventName + " event failed: " + views.EventReason(e), true, ""
		case e.Status == models.EventExpired:
			return "The " + r.EventName + " event expired: it was older than Meta's 7 days when its turn came.", true, ""
		case e.Status == models.EventQueued && ds.PausedAt != nil:
			return "The " + r.EventName + " event waits: the dataset " + ds.Name + " is paused until a person saves a new token.", true, ""
		}
		return "", false, ""
	}
	note = "No " + r.EventName + " event: "
	switch {
	case h.now().Sub(l.CreatedAt) > decide.RecentWindow:
		return note + "the lead is older than Meta's 7 days, so none can be sent.", true, ""
	case r.CreatedAt.After(l.UpdatedAt):
		note += "the rule was created after the lead last changed, and rules decide a lead's events when the lead changes."
	case r.UpdatedAt.After(l.UpdatedAt):
		note += "the rule was changed after the lead last changed, and rules decide a lead's events when the lead changes."
	default:
		note += "the rule did not match the lead when its events were last decided."
	}
	if !role.AtLeast(models.RoleEditor) {
		return note + " An editor can apply the rule to the leads of the last 7 days.", true, ""
	}
	return note, true, views.AccountURL(a.ID, "/rules/"+strconv.FormatInt(r.ID, 10)+"/apply")
}

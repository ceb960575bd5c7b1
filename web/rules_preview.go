package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// previewDeadline bounds a preview: well under the server's write
// timeout (60 s, cmd/leadsignal), so that a rule too costly to count over
// a week of leads gets an answer in words rather than a cut connection.
const previewDeadline = 20 * time.Second

// previewDeadlineForTests, when positive, replaces previewDeadline
// (rules_export_test.go).
var previewDeadlineForTests atomic.Int64

func previewTimeout() time.Duration {
	if d := previewDeadlineForTests.Load(); d > 0 {
		return time.Duration(d)
	}
	return previewDeadline
}

// statusClientClosed is what the access log records for a request whose
// client went away before the answer: nginx's 499.
const statusClientClosed = 499

// clientGone reports whether the request's client went away: it closed
// the connection, or htmx dropped the request for a newer one (the form's
// hx-sync). That is no failure of the server, and there is no one to
// answer.
func clientGone(c echo.Context) bool {
	return errors.Is(c.Request().Context().Err(), context.Canceled)
}

// previewRule counts what the rule being edited would do with every lead
// of the last 7 days as they are now, with the matcher that decides their
// events; a rule that does not compile shows its problems instead, and
// one that takes longer than previewDeadline says so.
func (h *Handler) previewRule(c echo.Context) error {
	return h.answerPreview(c, readRuleInput(c))
}

// previewSavedRule previews a rule as saved: the read-only rule page's
// (sales), whose form posts nothing.
func (h *Handler) previewSavedRule(c echo.Context) error {
	r, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	return h.answerPreview(c, ruleInputOf(r))
}

func (h *Handler) answerPreview(c echo.Context, in ruleInput) error {
	err := h.countPreview(c, in)
	if err != nil && clientGone(c) {
		return c.NoContent(statusClientClosed)
	}
	return err
}

func (h *Handler) countPreview(c echo.Context, in ruleInput) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	env, err := h.ruleEnv(ctx, a.Account, in.ID)
	if errors.Is(err, store.ErrNotFound) {
		env, err = h.ruleEnv(ctx, a.Account, 0) // the rule was deleted meanwhile
	}
	if err != nil {
		return err
	}
	// Rows not filled in yet are being typed: the preview counts without
	// them rather than call them wrong.
	junkWarnings := rule.JunkInOr(in.spec())
	in, rows := finishedInput(in)
	r := in.sendRule(a.ID)
	warnings := sharedEvents(r, env.rules)
	// The numbers do not depend on the event's name: a new rule, which
	// has none yet, is counted under a stand-in.
	noName := strings.TrimSpace(r.EventName) == ""
	if noName {
		r.EventName = previewEventName
	}
	m, problems := rule.CompileRule(r, env.schema)
	if len(problems) > 0 {
		v := views.RulePreview{Warnings: warnings, JunkWarnings: junkWarnings}
		if len(rows.unfinished) > 0 && onlyAt(problems, "conditions") {
			v.Waiting = "Choose a field and type a value for a condition to see the leads it matches."
			return render(c, http.StatusOK, views.RulePreviewView(v))
		}
		for _, p := range problems {
			v.Problems = append(v.Problems, rows.where(p))
		}
		return render(c, http.StatusOK, views.RulePreviewView(v))
	}
	res, err := h.preview(ctx, env, r, m)
	var v views.RulePreview
	switch {
	case errors.Is(err, errPreviewTooLong):
		v = views.RulePreview{TooLong: true, Deadline: fmt.Sprintf("%g seconds", previewTimeout().Seconds()), Read: res.Leads}
	case err != nil:
		return err
	default:
		v = h.previewView(a.Account, m, res)
		for i, d := range decide.Destinations(env.datasets, r) {
			v.Sends = append(v.Sends, views.RulePreviewSend{Destination: destinationLabel(d), Kind: d.Of(), Sendable: res.Sendable[i]})
		}
	}
	v.Warnings, v.JunkWarnings = warnings, junkWarnings
	v.Unfinished = unfinishedNote(rows.unfinished)
	if noName {
		v.Note = strings.TrimSpace(v.Note + " Choose the event name before you save: the numbers do not depend on it.")
	}
	return render(c, http.StatusOK, views.RulePreviewView(v))
}

// previewEventName stands in for the event name of a rule that has none
// yet, in the preview only: a custom name, which every mode takes.
const previewEventName = "UnnamedEvent"

// previewRows says which of the form's condition rows the preview counts:
// for each condition it kept, the row's name as the form numbers it
// ("Condition 2", "Group 1, condition 2"), and the names of the rows it
// left out as not filled in yet.
type previewRows struct {
	kept       []string   // of the rule's own conditions
	groups     [][]string // of each kept group's
	groupNames []string   // of each kept group: "Group 2"
	unfinished []string
}

// where says problem p of the previewed rule with the row it is about,
// as the form numbers them.
func (pr previewRows) where(p rule.Problem) string {
	msg := sentence(p.Message)
	if m := groupPath.FindStringSubmatch(p.Path); m != nil {
		if g, _ := strconv.Atoi(m[1]); g < len(pr.groupNames) {
			return pr.groupNames[g] + ": " + msg
		}
	}
	name := rowAt(p.Path, pr.kept, func(g int) ([]string, bool) {
		if g >= len(pr.groups) {
			return nil, false
		}
		return pr.groups[g], true
	})
	if name == nil {
		return msg
	}
	return *name + ": " + msg
}

// finishedInput is the form with only its rows filled in: a field chosen
// and, for a match type that takes one, a value typed. A group none of
// whose rows is filled in is left out too.
func finishedInput(in ruleInput) (ruleInput, previewRows) {
	var pr previewRows
	filled := func(cd rule.Condition) bool {
		return cd.Field != "" && (!cd.MatchType.TakesPattern() || strings.TrimSpace(cd.Pattern) != "")
	}
	var conds []rule.Condition
	for i, cd := range in.Conditions {
		name := "Condition " + strconv.Itoa(i+1)
		if !filled(cd) {
			pr.unfinished = append(pr.unfinished, name)
			continue
		}
		conds, pr.kept = append(conds, cd), append(pr.kept, name)
	}
	var groups []groupInput
	for g, gi := range in.Groups {
		var kept []rule.Condition
		var names []string
		for i, cd := range gi.Conditions {
			name := fmt.Sprintf("Group %d, condition %d", g+1, i+1)
			if !filled(cd) {
				pr.unfinished = append(pr.unfinished, name)
				continue
			}
			kept, names = append(kept, cd), append(names, name)
		}
		if len(kept) > 0 || len(gi.Conditions) == 0 {
			groups = append(groups, groupInput{Combinator: gi.Combinator, Conditions: kept})
			pr.groups = append(pr.groups, names)
			pr.groupNames = append(pr.groupNames, fmt.Sprintf("Group %d", g+1))
		}
	}
	in.Conditions, in.Groups = conds, groups
	return in, pr
}

// onlyAt reports whether every problem is at path.
func onlyAt(problems []rule.Problem, path string) bool {
	for _, p := range problems {
		if p.Path != path {
			return false
		}
	}
	return true
}

// unfinishedNote says which condition rows the preview leaves out as not
// filled in yet; "" for none.
func unfinishedNote(rows []string) string {
	switch len(rows) {
	case 0:
		return ""
	case 1:
		return rows[0] + " is not filled in yet: the numbers leave it out."
	}
	plain := true
	for _, r := range rows {
		plain = plain && strings.HasPrefix(r, "Condition ")
	}
	if plain {
		nums := make([]string, len(rows))
		for i, r := range rows {
			nums[i] = strings.TrimPrefix(r, "Condition ")
		}
		return "Conditions " + strings.Join(nums, ", ") + " are not filled in yet: the numbers leave them out."
	}
	return strings.Join(rows, "; ") + " are not filled in yet: the numbers leave them out."
}

// errPreviewTooLong is preview's answer when it ran past previewDeadline.
var errPreviewTooLong = errors.New("the preview took too long")

// preview runs m, the compiled rule r, over every lead of the account
// captured in the last 7 days, as they are now (decide.Preview). Past
// previewDeadline it stops with errPreviewTooLong and the counts so far.
func (h *Handler) preview(ctx context.Context, env ruleEnv, r models.SendRule, m *rule.Matcher) (rule.PreviewResult, error) {
	ctx, cancel := context.WithTimeout(ctx, previewTimeout())
	defer cancel()
	res, err := decide.Preview(ctx, h.store, env.account, env.datasets, r, m, h.now())
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = errPreviewTooLong
	}
	return res, err
}

func (h *Handler) previewView(a models.Account, m *rule.Matcher, res rule.PreviewResult) views.RulePreview {
	v := views.RulePreview{Leads: res.Leads, Matched: res.Matched, OutJunk: res.OutJunk, OutPartial: res.OutPartial,
		OutCompleted: res.OutCompleted, MatchedJunk: res.MatchedJunk, MatchedPartial: res.MatchedPartial,
		Or: m.Spec().Combinator == rule.Or}
	if m.Mode() == rule.Manual {
		v.Note = "A manual rule sends only when a person clicks: these are the leads whose page would offer the button."
	}
	considered := res.Considered()
	for _, cc := range res.Conditions {
		v.Conditions = append(v.Conditions, views.RulePreviewCondition{Text: cc.Condition.String(), Holds: cc.Holds,
			RulesOut: considered - cc.Holds, Alone: cc.Alone})
	}
	for _, gc := range res.Groups {
		g := views.RulePreviewGroup{Text: rule.ConditionsText(gc.Group.Combinator, gc.Group.Conditions), Or: gc.Group.Combinator == rule.Or,
			Holds: gc.Holds, RulesOut: considered - gc.Holds, Alone: gc.Alone}
		for _, cc := range gc.Conditions {
			g.Conditions = append(g.Conditions, views.RulePreviewCondition{Text: cc.Condition.String(), Holds: cc.Holds,
				RulesOut: considered - cc.Holds, Alone: cc.Alone})
		}
		v.Groups = append(v.Groups, g)
	}
	k := res.Keys
	v.Keys = []views.RuleKeyShare{
		{Key: "em", Label: "Email (em)", Count: k.Email}, {Key: "ph", Label: "Phone (ph)", Count: k.Phone},
		{Key: "fbc", Label: "Click id (fbc)", Count: k.FBC}, {Key: "fbp", Label: "Browser id (fbp)", Count: k.FBP},
		{Key: "external_id", Label: "External id", Count: k.ExternalID}, {Key: "client_ip_address", Label: "IP address", Count: k.IP},
		{Key: "client_user_agent", Label: "User agent", Count: k.UserAgent},
	}
	now, loc := h.now(), location(a)
	lead := func(l rule.PreviewLead) views.RulePreviewLead {
		title := l.Email
		switch {
		case title == "" && l.Name != "":
			title = l.Name
		case title == "" && l.Phone != "":
			title = l.Phone
		case title == "":
			title = "Lead " + strconv.FormatInt(l.ID, 10)
		}
		return views.RulePreviewLead{URL: views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)), Title: title,
			When: views.NewStamp(l.CreatedAt, now, loc), Why: capitalize(l.Why) + ".", Junk: l.Junk, Partial: l.Partial}
	}
	for _, l := range res.Matches {
		v.Matches = append(v.Matches, lead(l))
	}
	for _, l := range res.Misses {
		v.Misses = append(v.Misses, lead(l))
	}
	return v
}

// applyRule queues a saved automatic rule's events for the leads of the
// last 7 days it matches as they are now, after a confirmation (GET, or a
// POST without confirm=yes) that says how many match, how many have the
// event already and how many it would queue. Event ids are deterministic,
// so a lead that has the event already gets nothing twice.
func (h *Handler) applyRule(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	r, err := h.ruleParam(c)
	if err != nil {
		return err
	}
	ruleURL := views.AccountURL(a.ID, "/rules/"+strconv.FormatInt(r.ID, 10))
	if !r.Enabled || !rule.Mode(r.Mode).OnCapture() {
		setFlash(c, "error", "Only an enabled rule that sends on capture can be applied to recent leads.")
		return redirect(c, ruleURL)
	}
	since := h.now().Add(-decide.RecentWindow)
	if c.Request().Method != http.MethodPost || c.FormValue("confirm") != "yes" {
		res, err := h.decider.ApplyRule(ctx, a.ID, r.ID, since, true)
		if err != nil {
			return err
		}
		datasets, err := h.store.Datasets(ctx, a.ID)
		if err != nil {
			return err
		}
		p := h.page(c, "Apply "+r.Name)
		p.Nav = "rules"
		v := views.RuleConfirm{
			Title:   "Apply " + r.Name + " to the leads of the last 7 days?",
			Message: applyMessage(r.EventName, res),
			Detail:  applyDetail(r, decide.Destinations(datasets, r)),
			Action:  ruleURL + "/apply", Button: "Queue " + views.Plural(int64(res.Events-res.Had), "event", "events"), Cancel: ruleURL,
		}
		if res.Events == res.Had {
			v.Button = ""
		}
		return render(c, http.StatusOK, views.RuleConfirmPage(p, v))
	}
	res, err := h.decider.ApplyRule(ctx, a.ID, r.ID, since, false)
	if err != nil {
		return err
	}
	h.log.Info("send rule applied", "account_id", a.ID, "rule_id", r.ID, "matched", res.Matched, "queued", res.Queued)
	msg := views.Plural(int64(res.Queued), r.EventName+" event", r.EventName+" events") + " queued."
	if res.Queued == 0 {
		msg = "Nothing new to queue: every matching lead of the last 7 days has its " + r.EventName + " event already."
	}
	setFlash(c, "ok", msg)
	return redirect(c, ruleURL)
}

// applyDetail says what happens to the events applying r queues to its
// destinations dss: nothing twice, held back when the platform would
// refuse them, and what a dry run or a test mode does with them.
func applyDetail(r models.SendRule, dss []models.Dataset) string {
	msg := "These are the leads the rule's preview counts. A lead that already has this event gets " +
		"nothing twice: applying again queues only what is missing. An event Meta would refuse (a website lead without " +
		"its visitor's browser, say) is kept, held back with the reason, and not sent."
	if len(dss) > 1 || (len(dss) == 1 && dss[0].Of() != models.KindMeta) {
		msg = "These are the leads the rule's preview counts, one event for each destination. A lead that already has " +
			"an event gets nothing twice: applying again queues only what is missing. An event a platform would refuse is kept, " +
			"held back with the reason, and not sent."
	}
	for _, ds := range dss {
		switch {
		case ds.Mode == models.ModeDryRun:
			msg += " " + destinationLabel(ds) + " is a dry run: its events are built and logged, never sent."
		case ds.Mode == models.ModeTest:
			msg += " " + destinationLabel(ds) + " is in test mode: its events go to the platform's test tools only."
		case r.TestEventCode != "" && ds.Of() == models.KindMeta:
			msg += " The events to " + ds.Name + " go to Events Manager's Test Events only (a test event code)."
		}
	}
	return msg
}

// applyMessage says what applying a rule would do: how many recent leads
// match it as they are now, how many of those have its event already, and
// how many events it would queue.
func applyMessage(eventName string, res decide.Applied) string {
	queue := res.Events - res.Had
	match := "match"
	if res.Matched == 1 {
		match = "matches"
	}
	if res.Events != res.Matched {
		// Several destinations: an event each.
		msg := fmt.Sprintf("%s of the last 7 days %s this rule as they are now: %s, one for each destination, of which %s "+
			"stored already, so applying queues %s.", views.Plural(int64(res.Matched), "lead", "leads"), match,
			views.Plural(int64(res.Events), eventName+" event", eventName+" events"), views.Plural(int64(res.Had), "is", "are"),
			views.Plural(int64(queue), "event", "events"))
		if queue == 0 {
			msg += " There is nothing to queue."
		}
		return msg
	}
	msg := fmt.Sprintf("%s of the last 7 days %s this rule as they are now; %s the %s event already, so applying queues %s.",
		views.Plural(int64(res.Matched), "lead", "leads"), match, views.Plural(int64(res.Had), "has", "have"), eventName,
		views.Plural(int64(queue), eventName+" event", eventName+" events"))
	if queue == 0 {
		msg += " There is nothing to queue."
	}
	return msg
}

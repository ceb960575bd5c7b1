package models

import "strings"

// Shown-only statuses: like EventSending, they are never stored. A failed
// event (EventFailed) reads as one of three states, told apart by why it
// was not sent (Event.State).
const (
	// EventHeldBack: our own check refused the event before sending it (Meta
	// would refuse it); a person must change the lead, the rule or the
	// dataset.
	EventHeldBack EventStatus = "held_back"
	// EventNotSent: a decision cancelled the event: the lead no longer
	// matches its rule, was marked junk, or is gone.
	EventNotSent EventStatus = "not_sent"
)

// Reasons kept as an event's last error, which Event.State reads. Every
// writer of such a reason uses these (internal/decide, internal/dispatch).
const (
	// ReasonNotSent starts the reason of an event our check held back, or
	// that a decision cancelled: "not sent: user_data.client_user_agent:
	// required for website events".
	ReasonNotSent = "not sent: "
	// ReasonJunkLead is the reason of an event cancelled because a person
	// marked its lead junk and its rule does not require junk.
	ReasonJunkLead = ReasonNotSent + "a person marked the lead junk"
	// ReasonNoLonger starts the reason of an event cancelled because its
	// lead no longer matches its rule.
	ReasonNoLonger = ReasonNotSent + "no longer matches "
	// ReasonLeadGone is the reason of an event whose lead no longer exists.
	ReasonLeadGone = "the lead no longer exists"
	// ReasonTestLead is the reason of every event of a test lead (Lead.Test):
	// it is decided like any lead's, so the install page shows what a real
	// lead would send, and none goes to Meta.
	ReasonTestLead = ReasonNotSent + "a test lead, which never goes to Meta"
	// ReasonMetaRefused starts the reason of an event Meta refused.
	ReasonMetaRefused = "Meta refused: "
)

// Cancelled reports whether reason is one a decision gave an event it
// cancelled (ReasonJunkLead, ReasonNoLonger): the event is not sent, and is
// queued again when its lead matches once more.
func Cancelled(reason string) bool {
	return reason == ReasonJunkLead || strings.HasPrefix(reason, ReasonNoLonger)
}

// State is the event's state as people read it, one word each everywhere
// (views.EventStatusWord): its status, with a failed event told apart by
// why it was not sent. Meta refused it (or an event failed before reasons
// were kept): failed. Our pre-send check refused it: held back. A decision
// cancelled it, or it is a test lead's: not sent. The store's failedSQL,
// heldBackSQL and notSentSQL are these tests in SQL, and so is the
// databases' event_state function (migration 0041).
func (e Event) State() EventStatus {
	if e.Status != EventFailed {
		return e.Status
	}
	switch {
	case Cancelled(e.LastError) || e.LastError == ReasonLeadGone || e.LastError == ReasonTestLead:
		return EventNotSent
	case strings.HasPrefix(e.LastError, ReasonNotSent):
		return EventHeldBack
	}
	return EventFailed
}

package web

import (
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/views"
)

// fixPlaces are the pages a held-back event's fix may be made on, with
// their links; a URL left "" is not drawn (a rule since deleted, a page the
// person's role cannot open).
type fixPlaces struct {
	lead, rule, dataset, settings views.FixLink
}

// heldBackFix says what a person must change, and where, for held-back
// event e to go: its reason names what Meta would refuse (capi.Validate's
// field and why, after models.ReasonNotSent), and each field is set in one
// place: the lead (what its form or CRM posted), its rule or stage mapping,
// the dataset, or the account's settings.
func heldBackFix(e models.Event, at fixPlaces) views.EventFix {
	field, why, _ := strings.Cut(strings.TrimPrefix(e.LastError, models.ReasonNotSent), ": ")
	fix := func(what string, where ...views.FixLink) views.EventFix {
		f := views.EventFix{What: what}
		for _, l := range where {
			if l.URL != "" {
				f.Links = append(f.Links, l)
			}
		}
		return f
	}
	switch {
	case field == "event_source_url":
		return fix("Meta needs the page a website lead came from (event_source_url), and this lead has none. "+
			"Set the account's Website URL in its settings, which fills it in on the lead, or give the rule an action "+
			"source other than website if the lead did not come from the website; then retry.", at.settings, at.rule)
	case field == "user_data.client_user_agent":
		return fix("Meta needs the visitor's browser (client_user_agent) for a website event, and this lead was "+
			"captured without one. Give the rule an action source other than website (system_generated for leads a "+
			"CRM or a sales team sends), then retry; for the next leads, have the form forward the visitor's "+
			"User-Agent (the site snippet does).", at.rule, at.lead)
	case field == "user_data" && strings.HasPrefix(why, "no customer information key"):
		return fix("None of the lead's details can match a person on Meta: it has no valid email, phone, "+
			"external id, fbc or fbp. They come from what its form or CRM posted; this lead cannot be sent as it is.", at.lead)
	case strings.HasPrefix(field, "user_data."):
		return fix("The lead's "+strings.TrimPrefix(field, "user_data.")+" is "+why+". It comes from what the "+
			"lead's form or CRM posted: correct it there for the next leads.", at.lead)
	case field == "messaging_channel" || strings.Contains(why, "business_messaging"):
		return fix("A WhatsApp lead's events go to Meta as business messaging, which takes only Meta's messaging "+
			"event names. Give the rule one of them, or another action source; then retry.", at.rule)
	case field == "event_name" || field == "action_source":
		return fix("The rule's "+strings.ReplaceAll(field, "_", " ")+" is "+why+": change it on the rule, then retry.", at.rule)
	case strings.HasPrefix(field, "custom_data."):
		return fix("The event's "+strings.TrimPrefix(field, "custom_data.")+" is "+why+". Set it on the rule or "+
			"stage mapping (a fixed value, or the stage change's), or mark the stage again on the lead with its value.",
			at.rule, at.lead)
	case field == "data_processing_options":
		return fix("The dataset's Limited Data Use setting is "+why+": change it on the dataset, then retry.", at.dataset)
	}
	return fix("Meta would refuse the event as it is. Change what the reason names on the lead, its rule or the "+
		"dataset, then retry.", at.lead, at.rule, at.dataset)
}

// eventFixPlaces are the links of heldBackFix for event e of account a:
// ruleURL and ruleName are its rule's or stage mapping's (madeBy). The
// account's settings are an owner's.
func eventFixPlaces(a *models.AccountAccess, e models.Event, ruleURL, ruleName, datasetName string) fixPlaces {
	at := fixPlaces{
		lead:    views.FixLink{Label: "the lead", URL: views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(e.LeadID, 10))},
		rule:    views.FixLink{Label: ruleName, URL: ruleURL},
		dataset: views.FixLink{Label: "dataset " + datasetName, URL: views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(e.DatasetID, 10))},
	}
	if a.Role.AtLeast(models.RoleEditor) {
		at.settings = views.FixLink{Label: "the account's settings", URL: views.AccountURL(a.ID, "/settings")}
	}
	return at
}

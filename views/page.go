// Package views renders leadsignal's HTML with templ. Components take typed
// props; they never query the database.
package views

import (
	"strconv"

	"github.com/leadsignal/leadsignal/models"
)

// Page is what the layout needs around every page's content.
type Page struct {
	Title string
	// User is nil on the login and setup pages.
	User *models.User
	// CSRF is the token every state-changing form and htmx request carries.
	CSRF string
	// HasAccounts is true when the user is a member of an account: the
	// page then has an account switcher, whose list it loads when opened
	// (SwitcherItems).
	HasAccounts bool
	// Accounts are the user's accounts, read only for the switcher's list
	// (SwitcherItems), not for every page.
	Accounts []models.AccountAccess
	// Account is the account being looked at, nil outside one.
	Account *models.AccountAccess
	// Nav names the current section of the account navigation.
	Nav string
	// Flashes are the one-time messages waiting for this page, newest first.
	Flashes []Flash
	// Lead is the id of the lead being looked at, 0 elsewhere.
	Lead int64
	// Alerts are account-wide problems shown on every page of the account.
	Alerts []Alert
}

// Alert is an account-wide problem a person must act on.
type Alert struct {
	Message  string
	Link     string
	LinkText string
	// Action, when set, is a URL the alert's button posts to (ActionText),
	// for the people allowed to act.
	Action     string
	ActionText string
}

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
}

// Field is one form input with what was typed and its error.
type Field struct {
	Name         string
	Label        string
	Type         string
	Value        string
	Error        string
	Hint         string
	Required     bool
	Autocomplete string
	List         string // id of a datalist with suggestions
}

// Option is one choice of a select.
type Option struct {
	Value string
	Label string
}

// AccountURL is the path of a page inside an account.
func AccountURL(accountID int64, rest string) string {
	return "/accounts/" + strconv.FormatInt(accountID, 10) + rest
}

func (p Page) accountURL(rest string) string {
	if p.Account == nil {
		return "/"
	}
	return AccountURL(p.Account.ID, rest)
}

func (p Page) can(min models.Role) bool {
	return p.Account != nil && p.Account.Role.AtLeast(min)
}

func navCurrent(p Page, name string) string {
	if p.Nav == name {
		return "page"
	}
	return ""
}

// LeadID is set on lead pages, for the forms' URLs.
func (p Page) leadID() string { return itoa(p.Lead) }

// withoutFlash is the page without its flashes, for a component that would
// otherwise show the layout's messages a second time.
func (p Page) withoutFlash() Page {
	p.Flashes = nil
	return p
}

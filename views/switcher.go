package views

import (
	"net/url"
	"strconv"

	"github.com/leadsignal/leadsignal/models"
)

// section is one part of an account's navigation as the account switcher
// keeps it: its list page, and the least role that may open it.
type section struct {
	path string
	min  models.Role
}

// sections are the parts of an account by Page.Nav, with the roles the
// routes of web/server.go require. Overview is every member's.
var sections = map[string]section{
	"leads":    {"/leads", models.RoleViewer},
	"events":   {"/events", models.RoleSales},
	"rules":    {"/rules", models.RoleSales},
	"stages":   {"/stages", models.RoleSales},
	"datasets": {"/datasets", models.RoleSales},
	"settings": {"/settings", models.RoleEditor},
}

// switchURL is where the account switcher takes the user in account a: the
// same section they are looking at, at its list (a lead, rule or
// connection of one account is never another's), or the Overview when
// their role in a cannot open it.
func switchURL(p Page, a models.AccountAccess) string {
	if s, ok := sections[p.Nav]; ok && a.Role.AtLeast(s.min) {
		return AccountURL(a.ID, s.path)
	}
	return AccountURL(a.ID, "")
}

// switcherURL is where the account switcher of page p loads its list
// from: the section and account p shows.
func switcherURL(p Page) string {
	q := url.Values{}
	if p.Nav != "" {
		q.Set("nav", p.Nav)
	}
	if p.Account != nil {
		q.Set("account", strconv.FormatInt(p.Account.ID, 10))
	}
	if len(q) == 0 {
		return "/switcher"
	}
	return "/switcher?" + q.Encode()
}

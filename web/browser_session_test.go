//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserPasswordAndSessions changes a password from the user menu,
// which logs out the user's other device, then logs out everywhere.
func TestBrowserPasswordAndSessions(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	base := a.srv.URL
	laptop, phone := chrome(t), chrome(t)
	laptop.login(base, "ada@example.com")
	phone.login(base, "ada@example.com")

	laptop.do(
		click(`[data-testid="user-menu"]`),
		click(`[data-testid="password-link"]`),
		visible(`[data-testid="password-form"]`),
	)
	if got := laptop.text(`[data-testid="session-count"]`); !strings.Contains(got, "2 sessions") {
		t.Errorf("session count = %q; want 2 sessions", got)
	}
	laptop.do(
		screenshot("password"),
		typeInto(`#f-current`, "not-my-password"),
		typeInto(`#f-password`, "new-password-1"),
		typeInto(`#f-confirm`, "new-password-1"),
		click(`[data-testid="password-form"] button[type="submit"]`),
		visible(`[data-testid="error-current"]`),
	)
	laptop.do(
		typeInto(`#f-current`, "password123"),
		typeInto(`#f-password`, "new-password-1"),
		typeInto(`#f-confirm`, "new-password-1"),
		click(`[data-testid="password-form"] button[type="submit"]`),
		visible(`[data-testid="flash"]`),
	)
	if got := laptop.text(`[data-testid="flash"]`); !strings.Contains(got, "other device") {
		t.Errorf("flash after the change = %q", got)
	}
	if got := laptop.text(`[data-testid="session-count"]`); !strings.Contains(got, "1 session") {
		t.Errorf("session count after the change = %q; want 1 session", got)
	}

	// The phone's session ended with the change.
	phone.do(chromedp.Navigate(base+"/accounts"), visible(`[data-testid="login-form"]`))

	// Log out everywhere from the user menu, on any page.
	laptop.do(
		chromedp.Navigate(base+"/accounts"),
		click(`[data-testid="user-menu"]`),
		click(`[data-testid="menu-logout-everywhere"]`),
		visible(`[data-testid="login-form"]`),
	)
	if got := laptop.text(`[data-testid="flash"]`); !strings.Contains(got, "every device") {
		t.Errorf("login page after logging out everywhere says %q", got)
	}
	laptop.do(chromedp.Navigate(base+"/password"), visible(`[data-testid="login-form"]`))
}

// TestBrowserAdminRemovesUser: an administrator removes a user from the
// Users page; the user's open session ends at once.
func TestBrowserAdminRemovesUser(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("root@example.com", true)
	a.user("ada@example.com", false)
	base := a.srv.URL
	admin, ada := chrome(t), chrome(t)
	ada.login(base, "ada@example.com")
	admin.login(base, "root@example.com")
	// A user without a password yet is offered a set-password link.
	if _, err := a.store.CreateUser(t.Context(), "a.long.address.for.someone.invited@subsidiary.example.com", "", false); err != nil {
		t.Fatal(err)
	}
	admin.eachWidth("admin-users", base+"/admin/users", `[data-testid="users-table"]`, func(int64) {
		if n := admin.count(`[data-testid="link-user-a.long.address.for.someone.invited@subsidiary.example.com"]`); n != 1 {
			t.Errorf("%d set-password link buttons for the user without a password; want 1", n)
		}
	})
	admin.do(
		chromedp.Navigate(base+"/admin/users"),
		visible(`[data-testid="users-table"]`),
		click(`[data-testid="remove-user-ada@example.com"]`),
		visible(`[data-testid="flash"]`),
		screenshot("admin-users-removed"),
	)
	if got := admin.text(`[data-testid="flash"]`); !strings.Contains(got, "ada@example.com was removed") {
		t.Errorf("flash = %q", got)
	}
	if n := admin.count(`[data-testid="remove-user-ada@example.com"]`); n != 0 {
		t.Error("the removed user is still listed")
	}
	if n := admin.count(`[data-testid="remove-user-root@example.com"]`); n != 0 {
		t.Error("the administrator is offered to remove himself")
	}
	ada.do(chromedp.Navigate(base+"/accounts"), visible(`[data-testid="login-form"]`))
}

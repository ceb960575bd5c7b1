package web

import (
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// requireAccount loads the account named in the URL for the current user.
// An account they are not a member of answers 404, exactly like one that
// does not exist.
func (h *Handler) requireAccount(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := strconv.ParseInt(c.Param("account"), 10, 64)
		if err != nil {
			return store.ErrNotFound
		}
		u := currentUser(c)
		a, err := h.store.AccountForUser(c.Request().Context(), u.ID, id)
		if err != nil {
			return err
		}
		c.Set(ctxAccount, &a)
		if c.Request().Method == http.MethodGet && (u.LastAccountID == nil || *u.LastAccountID != a.ID) {
			if err := h.store.SetLastAccount(c.Request().Context(), u.ID, a.ID); err != nil {
				h.log.Warn("remember last account", slog.Any("error", err))
			}
		}
		return next(c)
	}
}

// requireRole refuses members whose role is below min. They can see the
// account exists (they are members), so this is a 403, not a 404.
func (h *Handler) requireRole(min models.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !currentAccount(c).Role.AtLeast(min) {
				return echo.NewHTTPError(http.StatusForbidden, "Your role in this account does not allow this")
			}
			return next(c)
		}
	}
}

// gettingStarted reads which first steps the account has taken.
func (h *Handler) gettingStarted(c echo.Context, accountID int64) (*views.GettingStarted, error) {
	ctx := c.Request().Context()
	g := &views.GettingStarted{Example: curlExample(c)}
	keys, err := h.store.IngestKeys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	g.HasKey = slices.ContainsFunc(keys, func(k models.IngestKey) bool { return k.RevokedAt == nil })
	if g.HasLeads, err = h.store.HasLeads(ctx, accountID); err != nil {
		return nil, err
	}
	datasets, err := h.store.Datasets(ctx, accountID)
	if err != nil {
		return nil, err
	}
	g.HasDataset = len(datasets) > 0
	return g, nil
}

func newAccountForm() views.AccountForm {
	return views.AccountForm{
		Name:           views.Field{Name: "name", Label: "Name", Required: true, Hint: "The client's name, as your team says it."},
		Slug:           views.Field{Name: "slug", Label: "Slug", Hint: "Lowercase letters, digits and dashes; used by the command line. Made from the name when empty."},
		DefaultCountry: views.Field{Name: "default_country", Label: "Default country", Hint: "Phone numbers without a country code are read as this country's."},
		Owner:          views.Field{Name: "owner", Label: "Also make owner (email)", Type: "email", Hint: "Optional: an existing user who should own this account with you."},
	}
}

func (h *Handler) showNewAccount(c echo.Context) error {
	return render(c, http.StatusOK, views.NewAccountPage(h.page(c, "New account"), newAccountForm()))
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$`)

// slugify makes a slug suggestion from an account name.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	return s
}

// SlugProblem says what is wrong with an account slug, or "" when it is
// fine. The command line shares it with the new-account form.
func SlugProblem(s string) string {
	if !slugRE.MatchString(s) {
		return "Use 2 to 40 lowercase letters, digits and dashes, starting and ending with a letter or digit."
	}
	return ""
}

func (h *Handler) createAccount(c echo.Context) error {
	ctx := c.Request().Context()
	f := newAccountForm()
	f.Name.Value = strings.TrimSpace(c.FormValue("name"))
	f.Slug.Value = strings.ToLower(strings.TrimSpace(c.FormValue("slug")))
	f.DefaultCountry.Value = strings.ToUpper(strings.TrimSpace(c.FormValue("default_country")))
	f.Owner.Value = strings.TrimSpace(c.FormValue("owner"))

	f.Name.Error = validName(f.Name.Value)
	if f.Slug.Value == "" {
		f.Slug.Value = slugify(f.Name.Value)
	}
	if f.Name.Error == "" {
		f.Slug.Error = SlugProblem(f.Slug.Value)
	}
	if f.DefaultCountry.Value != "" && !country.Valid(f.DefaultCountry.Value) {
		f.DefaultCountry.Error = "Choose a country from the list."
	}
	var coOwner models.User
	if f.Owner.Value != "" {
		u, err := h.store.UserByEmail(ctx, f.Owner.Value)
		switch {
		case errors.Is(err, store.ErrNotFound):
			f.Owner.Error = "No user has this email. Create the user first under Users."
		case err != nil:
			return err
		}
		coOwner = u
	}
	if f.Name.Error != "" || f.Slug.Error != "" || f.DefaultCountry.Error != "" || f.Owner.Error != "" {
		return render(c, http.StatusUnprocessableEntity, views.NewAccountPage(h.page(c, "New account"), f))
	}

	me := currentUser(c)
	var a models.Account
	err := h.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		a, err = tx.CreateAccount(ctx, models.Account{
			Slug: f.Slug.Value, Name: f.Name.Value, Timezone: "UTC",
			DefaultCountry: f.DefaultCountry.Value, Currency: "USD",
		}, me.ID)
		if err != nil || coOwner.ID == 0 || coOwner.ID == me.ID {
			return err
		}
		return tx.SetMember(ctx, a.ID, coOwner.ID, models.RoleOwner)
	})
	if errors.Is(err, store.ErrConflict) {
		f.Slug.Error = "Another account already uses this slug."
		return render(c, http.StatusUnprocessableEntity, views.NewAccountPage(h.page(c, "New account"), f))
	}
	if err != nil {
		return err
	}
	setFlash(c, "ok", "Account "+a.Name+" created.")
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, ""))
}

func validName(s string) string {
	if msg := name.Problem(s); msg != "" {
		if msg == "required" {
			return "Enter a name."
		}
		return sentence(msg)
	}
	return ""
}

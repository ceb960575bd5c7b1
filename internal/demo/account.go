package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// The demo account and its user. The slug is not "demo", which `make run`
// gives its development account.
const (
	Slug        = "demo-roofing"
	AccountName = "Northwind Roofing (demo)"
	Email       = "demo@leadsignal.example"
	DatasetName = "Northwind website (dry run)"
	// KeyName is the ingest key the demo's leads come with.
	KeyName = "Website form"
)

// pixelID is the demo dataset's id: made up, since a dry run sends
// nothing.
const pixelID = "100000000000001"

// Login is the demo user's sign-in.
type Login struct {
	Email    string
	Password string
}

// login gives the demo user a new random password and returns it: the
// user is created when missing, as an administrator when it is the
// database's first user (so a fresh demo install has one), and is made an
// owner of the account. A new password ends the user's sessions.
func login(ctx context.Context, s *store.Store, accountID int64) (Login, error) {
	l := Login{Email: Email, Password: rand.Text()}
	hash, err := password.Hash(l.Password)
	if err != nil {
		return l, fmt.Errorf("demo: password: %w", err)
	}
	u, err := s.UserByEmail(ctx, Email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		n, cerr := s.CountUsers(ctx)
		if cerr != nil {
			return l, cerr
		}
		u, err = s.CreateUser(ctx, Email, hash, n == 0)
	case err == nil:
		err = s.SetUserPassword(ctx, u.ID, hash)
	}
	if err != nil {
		return l, err
	}
	return l, s.SetMember(ctx, accountID, u.ID, models.RoleOwner)
}

// createAccount makes the demo account with its dataset (in dry run, with
// the default rule every dataset gets: complete, clean leads become Lead),
// a TikTok and a Google Ads destination (otherDestinations),
// two more send rules (one of them to the dataset and TikTok both), the template stage mappings (qualified to
// QualifiedLead, booked to Schedule, won to a Purchase with the deal's
// value and currency) and an ingest key. ErrConflict: the account is there
// already.
func createAccount(ctx context.Context, s *store.Store) (models.Account, error) {
	acc, err := s.CreateAccount(ctx, models.Account{
		Slug: Slug, Name: AccountName, Timezone: Timezone, DefaultCountry: "US", Currency: "USD",
		CRMName: "Demo CRM", WebsiteURL: site + "/contact",
	}, 0)
	if err != nil {
		return acc, err
	}
	d := models.Dataset{AccountID: acc.ID, Name: DatasetName, PixelID: pixelID, Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := s.CreateDataset(ctx, &d); err != nil {
		return acc, err
	}
	// The same leads feed TikTok and Google Ads, in dry run too, each with
	// its default rule: the destinations page and the send log show each
	// platform's payloads.
	others := otherDestinations(acc.ID)
	for i := range others {
		if err := s.CreateDataset(ctx, &others[i]); err != nil {
			return acc, err
		}
	}
	for _, r := range rules(d, others[0]) {
		if _, problems := rule.CheckRule(r, rule.Schema{}); len(problems) > 0 {
			return acc, fmt.Errorf("demo: rule %s: %s", r.Name, problems[0])
		}
		if err := s.CreateSendRule(ctx, &r, nil); err != nil {
			return acc, err
		}
	}
	if _, err := s.StartStageTemplate(ctx, acc.ID, d.ID, nil); err != nil {
		return acc, err
	}
	// The key the website's form would post with, as a set-up account has
	// one; its secret is not kept: the demo captures without HTTP, and
	// notes the key's use as the API would (Demo.useKey).
	if _, _, err := s.CreateIngestKey(ctx, acc.ID, KeyName); err != nil {
		return acc, err
	}
	return acc, nil
}

// otherDestinations are the demo's destinations beside its Meta dataset:
// a TikTok pixel and a Google Ads account with a conversion action for its
// Lead events, in dry run.
func otherDestinations(accountID int64) []models.Dataset {
	return []models.Dataset{
		{AccountID: accountID, Kind: models.KindTikTok, Name: "TikTok Ads", PixelID: "CDEMOPIXEL2026", EventSource: "web",
			Mode: models.ModeDryRun, LDU: models.LDUOff},
		{AccountID: accountID, Kind: models.KindGoogle, Name: "Google Ads", PixelID: "1234567890", EventNames: `{"Lead":"700000001"}`,
			Mode: models.ModeDryRun, LDU: models.LDUOff},
	}
}

// rules are the demo's send rules beside the dataset's default one: a
// conditional rule for leads worth a call the same day, to the dataset d
// and the TikTok destination tiktok both, and one that reports forms left
// half filled in under an event of their own.
func rules(d, tiktok models.Dataset) []models.SendRule {
	cond := func(cs ...rule.Condition) string {
		b, _ := json.Marshal(cs)
		return string(b)
	}
	return []models.SendRule{
		{
			AccountID: d.AccountID, DatasetID: d.ID, AlsoDatasetIDs: models.IDs{tiktok.ID}, Name: "High-intent leads",
			Mode:      string(rule.AutomaticMatch),
			EventName: "Contact", Combinator: string(rule.Or), Enabled: true,
			Conditions: cond(
				rule.Condition{Field: "email_is_work", MatchType: rule.Equals, Pattern: "true"},
				rule.Condition{Field: "utm_campaign", MatchType: rule.Equals, Pattern: "storm-damage-repair"},
			),
		},
		{
			AccountID: d.AccountID, DatasetID: d.ID, Name: "Started the quote form", Mode: string(rule.AutomaticPartial),
			EventName: "PartialLead", Combinator: string(rule.And), Conditions: "[]", Enabled: true,
		},
	}
}

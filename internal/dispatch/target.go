package dispatch

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
)

// target is where and how a destination's batches go: Meta's Target for
// a Meta dataset, else the platform's.
type target struct {
	meta capi.Target
	dest destination.Target
}

// target is where and how to send for a dataset.
func (d *Dispatcher) target(ds models.Dataset) (target, error) {
	if ds.Of() == models.KindMeta {
		t, err := targetFor(d.o.Box, d.o.GraphURL, d.o.DefaultVersion, ds)
		return target{meta: t}, err
	}
	if d.o.Platforms[ds.Of()] == nil {
		return target{}, fmt.Errorf("this server cannot send to %s", platform.Name(ds.Of()))
	}
	t, err := DestinationTarget(d.o.Box, ds)
	return target{dest: t}, err
}

// DestinationTarget opens the sealed secrets of a destination other than
// Meta's into where its batches go.
func DestinationTarget(box *seal.Box, ds models.Dataset) (destination.Target, error) {
	t := destination.Target{AccountID: ds.PixelID, EventSource: ds.EventSource, LoginAccount: ds.LoginAccount}
	if ds.Mode == models.ModeTest {
		t.Test, t.TestEventCode = true, ds.TestEventCode
	}
	switch ds.Consent {
	case models.ConsentGranted:
		t.ConsentAdUserData, t.ConsentAdPersonalization = "CONSENT_GRANTED", "CONSENT_GRANTED"
	case models.ConsentDenied:
		t.ConsentAdUserData, t.ConsentAdPersonalization = "CONSENT_DENIED", "CONSENT_DENIED"
	}
	tok, sec, err := openSecrets(box, ds, "destination", "OAuth client secret")
	if err != nil {
		return t, err
	}
	t.Token = tok
	if ds.Of() == models.KindGoogle {
		// Google's token is its OAuth refresh token, its app secret the
		// OAuth client's secret.
		t.Token, t.OAuth = "", destination.OAuth{ClientID: ds.ClientID, RefreshToken: tok, ClientSecret: sec}
	}
	return t, nil
}

// openSecrets opens a destination's sealed token and, when it has one,
// its app secret; noun and secretName say what they are in the error.
func openSecrets(box *seal.Box, ds models.Dataset, noun, secretName string) (token, appSecret string, err error) {
	if ds.TokenSealed == "" {
		return "", "", errors.New("the " + noun + " has no access token")
	}
	if token, err = box.Open(ds.TokenSealed, TokenLabel(ds.ID)); err != nil {
		return "", "", errors.New("the access token cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
	}
	if ds.AppSecretSealed != "" {
		if appSecret, err = box.Open(ds.AppSecretSealed, AppSecretLabel(ds.ID)); err != nil {
			return "", "", errors.New("the " + secretName + " cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
		}
	}
	return token, appSecret, nil
}

// targetFor opens a dataset's sealed secrets into a send target.
func targetFor(box *seal.Box, graphURL, defaultVersion string, ds models.Dataset) (capi.Target, error) {
	t := capi.Target{BaseURL: graphURL, Version: ds.APIVersion, PixelID: ds.PixelID}
	if t.Version == "" {
		t.Version = defaultVersion
	}
	if ds.Mode == models.ModeTest {
		t.TestEventCode = ds.TestEventCode
	}
	var err error
	t.Token, t.AppSecret, err = openSecrets(box, ds, "dataset", "app secret")
	return t, err
}

// TokenLabel and AppSecretLabel bind sealed secrets to their dataset.
func TokenLabel(datasetID int64) string {
	return "dataset:" + strconv.FormatInt(datasetID, 10) + ":token"
}

// AppSecretLabel is the seal label of a dataset's app secret.
func AppSecretLabel(datasetID int64) string {
	return "dataset:" + strconv.FormatInt(datasetID, 10) + ":app_secret"
}

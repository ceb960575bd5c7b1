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
	if ds.TokenSealed == "" {
		return t, errors.New("the destination has no access token")
	}
	tok, err := box.Open(ds.TokenSealed, TokenLabel(ds.ID))
	if err != nil {
		return t, errors.New("the access token cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
	}
	t.Token = tok
	if ds.Of() == models.KindGoogle {
		// Google's token is its OAuth refresh token, its app secret the
		// OAuth client's secret.
		t.Token, t.OAuth = "", destination.OAuth{ClientID: ds.ClientID, RefreshToken: tok}
		if ds.AppSecretSealed != "" {
			sec, err := box.Open(ds.AppSecretSealed, AppSecretLabel(ds.ID))
			if err != nil {
				return t, errors.New("the OAuth client secret cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
			}
			t.OAuth.ClientSecret = sec
		}
	}
	return t, nil
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
	if ds.TokenSealed == "" {
		return t, errors.New("the dataset has no access token")
	}
	tok, err := box.Open(ds.TokenSealed, TokenLabel(ds.ID))
	if err != nil {
		return t, errors.New("the access token cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
	}
	t.Token = tok
	if ds.AppSecretSealed != "" {
		sec, err := box.Open(ds.AppSecretSealed, AppSecretLabel(ds.ID))
		if err != nil {
			return t, errors.New("the app secret cannot be decrypted (was LEADSIGNAL_SECRET changed?); save it again")
		}
		t.AppSecret = sec
	}
	return t, nil
}

// TokenLabel and AppSecretLabel bind sealed secrets to their dataset.
func TokenLabel(datasetID int64) string {
	return "dataset:" + strconv.FormatInt(datasetID, 10) + ":token"
}

// AppSecretLabel is the seal label of a dataset's app secret.
func AppSecretLabel(datasetID int64) string {
	return "dataset:" + strconv.FormatInt(datasetID, 10) + ":app_secret"
}

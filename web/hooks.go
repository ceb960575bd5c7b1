package web

import (
	"github.com/leadsignal/leadsignal/models"
)

// CRMOptions are the settings of the CRM connections: their APIs' base
// URLs (HUBSPOT_API_URL, PIPEDRIVE_API_URL) and the public address hook
// URLs are made absolute with (LEADSIGNAL_PUBLIC_URL).
type CRMOptions struct {
	HubSpotAPIURL   string
	PipedriveAPIURL string
	PublicURL       string
}

// hookPath is the path a connection's CRM posts to.
func hookPath(c models.CRMConnection) string {
	return "/hooks/" + c.Kind + "/" + c.Token
}

// hookURL is the URL a connection's CRM posts to: absolute with the public
// address when LEADSIGNAL_PUBLIC_URL is set, else its path (the server
// cannot know the address a CRM reaches it at behind a proxy).
func (h *Handler) hookURL(c models.CRMConnection) string {
	return h.crm.PublicURL + hookPath(c)
}

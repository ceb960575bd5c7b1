package normalize

import (
	"testing"
	"time"
)

// What one typical website lead costs to normalise and hash, phone parsing
// included: the least CPU a capture spends on a lead before any I/O.
func BenchmarkNormalize(b *testing.B) {
	in := Input{
		Email: "Jane.Doe+ads@Example.com", Phone: "(415) 555-0132", FirstName: "Jane", LastName: "Doe",
		City: "San Francisco", State: "California", Zip: "94103", Country: "US", ExternalID: "form-123",
		ClientIP: "203.0.113.7", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15",
		FBCLID: "IwAR2xyz", DefaultCountry: "US", CapturedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
	}
	for b.Loop() {
		Normalize(in)
	}
}

// Phone parsing alone (github.com/nyaruka/phonenumbers).
func BenchmarkPhone(b *testing.B) {
	for b.Loop() {
		Phone("(415) 555-0132", "US", "US")
	}
}

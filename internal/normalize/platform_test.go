package normalize

import "testing"

// Each platform's email and phone hashes, with destinations.md's test
// vectors ("Test vectors").
func TestPlatformHashes(t *testing.T) {
	tests := []struct {
		name         string
		in           Input
		p            Platform
		email, phone string
	}{
		{"TikTok: a plain address", Input{Email: "janedoe@gmail.com"}, TikTok,
			"d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69", ""},
		{"TikTok: trimmed and lower-cased, no Gmail rule; phone with +", Input{Email: " Alex.Smith+Promo@Gmail.com ", Phone: "+1 (800) 555-0100"}, TikTok,
			"7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab", "fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30"},
		{"TikTok: a UK phone with +", Input{Phone: "+44 20 7183 8750"}, TikTok,
			"", "e631c2534428c6c9b48c2167604a8983046085e43a2c00ed748733c544c0bb4d"},
		{"Google: the Gmail rule", Input{Email: "cloudy.sanfrancisco+shopping@gmail.com"}, Google,
			"223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4", ""},
		{"Google: another domain as it is", Input{Email: "user.name+NYC@Example.com"}, Google,
			"f109a2a632fbcea5fc82049f50beed3d8621bf9034399f437fb622222acccdac", ""},
		{"Google: Gmail trimmed and lower-cased first", Input{Email: " Alex.Smith+Promo@Gmail.com "}, Google,
			"72d3b188af0f3324b9938c5ea015d5cc7155ebf56160b551cd5037bab70b3d7d", ""},
		{"Google: a US phone with +, the country from the account", Input{Phone: "(800)555-0100", DefaultCountry: "US"}, Google,
			"", "fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30"},
		{"Google: dots kept off Gmail", Input{Email: "alex.2@example.com"}, Google,
			"97a24240e3c76dfc0abdb63a3d73468ff8d94b81fd3dc084cc32994ba4fad7fe", ""},
		{"Pinterest: phone digits without +", Input{Email: " Alex.Smith+Promo@Gmail.com ", Phone: "+1 (800) 555-0100"}, Pinterest,
			"7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab", "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c"},
		{"Pinterest: a UK phone", Input{Phone: "+44 20 7183 8750"}, Pinterest,
			"", "8d5f937f3a5590634cbe975951a6aa1543170671ce6e73cce4062f4e8c288417"},
		{"Meta: as the lead keeps them", Input{Email: " Alex.Smith+Promo@Gmail.com ", Phone: "+1 (800) 555-0100"}, Meta,
			"7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab", "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c"},
		{"LinkedIn: trimmed and lower-cased", Input{Email: " Alex.Smith+Promo@Gmail.com "}, LinkedIn,
			"7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab", ""},
		// What came hashed goes as it came where the platform's rule is
		// ours; a hashed phone cannot get its "+".
		{"Google: a hashed email as it came", Input{Email: "D6117306485ED0E50AFAB3AC871E98F81699151F30281527D63FF5F233656C69"}, Google,
			"d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69", ""},
		{"TikTok: a hashed phone is none", Input{Phone: "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c"}, TikTok, "", ""},
		{"Pinterest: a hashed phone as it came", Input{Phone: "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c"}, Pinterest,
			"", "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c"},
		{"a phone that is no number is none", Input{Phone: "555"}, TikTok, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Normalize(tt.in)
			if got := k.EmailHash(tt.p); got != tt.email {
				t.Errorf("EmailHash(%s) = %q; want %q", tt.p, got, tt.email)
			}
			if got := k.PhoneHash(tt.p); got != tt.phone {
				t.Errorf("PhoneHash(%s) = %q; want %q", tt.p, got, tt.phone)
			}
		})
	}
}

func TestGoogleEmail(t *testing.T) {
	for in, want := range map[string]string{
		"cloudy.sanfrancisco+shopping@gmail.com": "cloudysanfrancisco@gmail.com",
		"a.b.c@googlemail.com":                   "abc@googlemail.com",
		"user.name+nyc@example.com":              "user.name+nyc@example.com",
		"a.b@gmail.com.example":                  "a.b@gmail.com.example",
		"no-at-sign":                             "no-at-sign",
	} {
		if got := GoogleEmail(in); got != want {
			t.Errorf("GoogleEmail(%q) = %q; want %q", in, got, want)
		}
	}
}

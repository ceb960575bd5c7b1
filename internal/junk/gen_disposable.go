//go:build ignore

// gen_disposable writes disposable_domains.txt from an unpacked copy of the
// npm package disposable-email-domains. update_disposable.sh runs it:
//
//	go run gen_disposable.go -pkg DIR/package -out disposable_domains.txt
//
// It merges index.json (exact domains) with wildcard.json (domains whose
// subdomains are disposable too): the lookup matches subdomains of every
// listed domain anyway. Entries that are public suffixes are dropped,
// because matching their subdomains would flag real universities and
// companies (edu.pl, web.id), except private suffixes that wildcard.json
// names on purpose (dynamic DNS hosts such as ddns.net).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

func main() {
	dir := flag.String("pkg", "", "unpacked npm package folder (with package.json, index.json, wildcard.json)")
	out := flag.String("out", "disposable_domains.txt", "file to write")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		log.Fatal(err)
	}
}

func run(dir, out string) error {
	var pkg struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		License    string `json:"license"`
		Repository any    `json:"repository"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return err
	}
	var header []string
	lists := map[string][]string{}
	for _, name := range []string{"index.json", "wildcard.json"} {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		header = append(header, fmt.Sprintf("# %s sha256 %s", name, hex.EncodeToString(sum[:])))
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, d := range list {
			d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
			if d = strings.TrimPrefix(d, "*."); d != "" {
				lists[name] = append(lists[name], d)
			}
		}
	}
	wildcard := map[string]bool{}
	for _, d := range lists["wildcard.json"] {
		wildcard[d] = true
	}
	seen := map[string]bool{}
	var domains []string
	for _, d := range append(lists["index.json"], lists["wildcard.json"]...) {
		if seen[d] {
			continue
		}
		seen[d] = true
		if !strings.Contains(d, ".") {
			fmt.Fprintf(os.Stderr, "dropped %s: no dot\n", d)
			continue
		}
		if ps, icann := publicsuffix.PublicSuffix(d); ps == d && (icann || !wildcard[d]) {
			fmt.Fprintf(os.Stderr, "dropped %s: public suffix (icann %v)\n", d, icann)
			continue
		}
		domains = append(domains, d)
	}
	slices.Sort(domains)

	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s %s, licence %s, %v\n", pkg.Name, pkg.Version, pkg.License, pkg.Repository)
	for _, h := range header {
		sb.WriteString(h + "\n")
	}
	fmt.Fprintf(&sb, "# %d domains: index.json and wildcard.json merged, public suffixes dropped (see gen_disposable.go); regenerate with update_disposable.sh\n", len(domains))
	for _, d := range domains {
		sb.WriteString(d + "\n")
	}
	return os.WriteFile(out, []byte(sb.String()), 0o644)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

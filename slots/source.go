package slots

import (
	"net/url"
	"strings"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Limits on a claim's sources.
const (
	// MaxSources is how many sources a claim may cite, as in AOP.
	MaxSources = 20
	// MaxSourceURLLen and MaxSourceTitleLen bound a source's URL and
	// title, in characters.
	MaxSourceURLLen   = 2048
	MaxSourceTitleLen = 500
)

// Source is a citation a claim gives: a web page's URL and, optionally, its
// title. AOP's claim instructions require sources; its agent CLIs print
// them beside the claim.
type Source struct {
	URL   string `json:"url"`             // absolute http or https, written canonically
	Title string `json:"title,omitempty"` // trimmed; empty when none was given
}

// normalizeSources is AOP's rule for the sources of a new claim: URLs and
// titles trimmed, sources without a URL dropped, at most MaxSources left,
// each an absolute http or https URL, written canonically (scheme and
// host lower case, an empty path "/"), the first of each canonical URL
// kept. The result is never nil.
func normalizeSources(in []Source) ([]Source, error) {
	out := []Source{}
	seen := map[string]bool{}
	kept := 0
	for _, s := range in {
		s.URL, s.Title = strings.TrimSpace(s.URL), strings.TrimSpace(s.Title)
		if s.URL == "" {
			continue
		}
		if kept++; kept > MaxSources {
			return nil, store.Errorf(store.ErrInvalid, "invalid_sources", "Too many sources (max %d)", MaxSources)
		}
		if err := text.Check("sources", s.URL, true, MaxSourceURLLen); err != nil {
			return nil, err
		}
		if err := text.Check("sources", s.Title, false, MaxSourceTitleLen); err != nil {
			return nil, err
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
			return nil, store.Errorf(store.ErrInvalid, "invalid_sources", "Invalid source URL: %s", s.URL)
		}
		u.Host = strings.ToLower(u.Host) // url.Parse lowers the scheme
		if u.Path == "" && u.RawPath == "" {
			u.Path = "/"
		}
		s.URL = u.String()
		if !seen[s.URL] {
			seen[s.URL] = true
			out = append(out, s)
		}
	}
	return out, nil
}

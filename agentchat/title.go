package agentchat

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// TitleInstructions asks the agent to title its conversation, in the words
// of slot-machine's system prompt; put it in the agent's system prompt
// (claudecli.Runner.SystemPrompt). The Service takes the [[TITLE: …]]
// marker out of the agent's text and stores it as the conversation's title.
const TitleInstructions = `## Conversation titling

Include a conversation title in your responses using this format on its own line:
[[TITLE: short descriptive title]]
Include this in your first response. You may include it again to update the title if the topic changes.`

// titleMarker is the marker of TitleInstructions, as slot-machine matches
// it: on one line, the title trimmed.
var titleMarker = regexp.MustCompile(`\[\[TITLE:\s*(.+?)\]\][ \t]*\r?\n?`)

// titleOpen is how a marker starts.
const titleOpen = "[[TITLE:"

// maxHeldBack bounds the text held back while a marker may be starting:
// longer, it was not a marker.
const maxHeldBack = 400

// titleFilter takes the agent's [[TITLE: …]] markers out of its streamed
// text. A marker may be split across chunks, so text that may be the start
// of one is held back until the next chunk tells.
type titleFilter struct {
	held    string
	started bool // some text went through
	skipNL  bool // a marker ended the last chunk: its line break may start the next
}

// Feed takes the next chunk of assistant text and returns the text to
// store and stream now (markers removed) and the last title it completed
// ("" for none).
func (f *titleFilter) Feed(chunk string) (text, title string) {
	if f.skipNL && chunk != "" {
		chunk = strings.TrimPrefix(strings.TrimPrefix(chunk, "\r"), "\n")
		f.skipNL = false
	}
	buf := f.held + chunk
	f.held = ""
	text, title, removed := stripTitles(buf)
	if removed {
		f.skipNL = strings.HasSuffix(buf, "]]")
	}
	if i := markerStart(text); i >= 0 {
		text, f.held = text[:i], text[i:]
	}
	if removed && !f.started {
		text = strings.TrimLeft(text, " \t\r\n") // a leading marker's line goes with it
	}
	if removed && strings.TrimSpace(text) == "" {
		// Only the space around a marker: it joins the next text, if any.
		text, f.held = "", text+f.held
	}
	if text != "" {
		f.started = true
	}
	return text, title
}

// Flush returns the text still held back when the agent's text ends: it
// was not a marker (space left around a marker is dropped).
func (f *titleFilter) Flush() string {
	text := f.held
	f.held = ""
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return text
}

// stripTitles removes every complete marker of s and returns what is left
// and the last marker's title.
func stripTitles(s string) (text, title string, removed bool) {
	ms := titleMarker.FindAllStringSubmatch(s, -1)
	if len(ms) == 0 {
		return s, "", false
	}
	title = strings.TrimSpace(ms[len(ms)-1][1])
	if r := []rune(title); len(r) > MaxTitleLen {
		title = string(r[:MaxTitleLen])
	}
	return titleMarker.ReplaceAllString(s, ""), title, true
}

// markerStart is where an unfinished marker may start at the end of s: a
// suffix that is a prefix of "[[TITLE:", or that starts with it and has no
// line break or "]]" yet; -1 for none.
func markerStart(s string) int {
	for i := max(0, len(s)-maxHeldBack); i < len(s); i++ {
		if s[i] != '[' || !utf8.RuneStart(s[i]) {
			continue
		}
		tail := s[i:]
		if strings.HasPrefix(titleOpen, tail) {
			return i
		}
		if strings.HasPrefix(tail, titleOpen) && !strings.ContainsAny(tail, "\n") && !strings.Contains(tail, "]]") {
			return i
		}
	}
	return -1
}

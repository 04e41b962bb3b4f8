package client

import (
	"strings"
	"testing"
)

// encodeEvent writes ev as a server would, one data line per line of its
// data, with nl as the line ending.
func encodeEvent(ev event, nl string) string {
	var b strings.Builder
	b.WriteString("id: " + ev.id + nl)
	b.WriteString("event: " + ev.name + nl)
	for _, line := range strings.Split(ev.data, "\n") {
		b.WriteString("data: " + line + nl)
	}
	return b.String() + nl
}

// FuzzScanEvents: any two events, written with LF or CRLF line endings and
// with keep-alive comments around them, read back as themselves; any bytes
// at all are read without a panic.
func FuzzScanEvents(f *testing.F) {
	f.Add("1", "changed", `{"claimId":"claim_1"}`, "", "state", "line one\nline two", false, true)
	f.Add("", "", "", "7", "feed", ": not a comment", true, false)
	f.Add("x", "y", "\n\n", "id: z", "event", "data: w", true, true)
	f.Fuzz(func(t *testing.T, id1, name1, data1, id2, name2, data2 string, crlf, keepalive bool) {
		in := []event{{id: id1, name: name1, data: data1}, {id: id2, name: name2, data: data2}}
		for _, ev := range in {
			if strings.ContainsAny(ev.id+ev.name, "\r\n") || strings.ContainsRune(ev.data, '\r') {
				t.Skip("a field's own line break: not what a server writes")
			}
		}
		nl := "\n"
		if crlf {
			nl = "\r\n"
		}
		var stream strings.Builder
		for _, ev := range in {
			if keepalive {
				stream.WriteString(": keep-alive" + nl + nl)
			}
			stream.WriteString(encodeEvent(ev, nl))
		}
		var got []event
		if err := scanEvents(strings.NewReader(stream.String()), func(ev event) bool { got = append(got, ev); return true }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(in) {
			t.Fatalf("read %d events from %q, want %d", len(got), stream.String(), len(in))
		}
		for i := range in {
			if got[i].id != in[i].id || got[i].name != in[i].name || got[i].data != in[i].data {
				t.Fatalf("event %d: read %+v, want %+v", i, got[i], in[i])
			}
		}

		// The stream cut short hands out only whole events, the first ones
		// (an event cut before its blank line is dropped); arbitrary bytes
		// never panic.
		raw := stream.String()
		for _, cut := range []string{raw[:len(raw)/2], raw[:len(raw)-1], raw[:len(raw)/3]} {
			var part []event
			_ = scanEvents(strings.NewReader(cut), func(ev event) bool { part = append(part, ev); return true })
			for i, ev := range part {
				if i >= len(in) || ev.id != in[i].id || ev.name != in[i].name || ev.data != in[i].data {
					t.Fatalf("from %q, event %d is %+v: not a whole event of the stream", cut, i, ev)
				}
			}
		}
		_ = scanEvents(strings.NewReader(data1+data2), func(event) bool { return true })
	})
}

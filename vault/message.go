package vault

import (
	"strings"
	"unicode/utf8"
)

// MaxSubject is the most characters a commit's subject (its first line)
// holds, so that git log --oneline, git shortlog and a terminal show it
// whole.
const MaxSubject = 72

// Message is a commit message in git's conventions: a subject of at most
// MaxSubject characters that says what happened to what, paragraphs of
// body, and trailers last ("Run-Id: …"), which git log --grep finds and
// git interpret-trailers reads.
type Message struct {
	Subject  string
	Body     []string
	Trailers []Trailer
}

// A Trailer is one "Key: value" line of a message's last paragraph.
type Trailer struct{ Key, Value string }

// String words the message. A subject longer than MaxSubject is cut, with
// an ellipsis, and kept whole as the body's first paragraph; line breaks
// in a trailer's value are made spaces.
func (m Message) String() string {
	subject := strings.Join(strings.Fields(m.Subject), " ")
	paras := []string{}
	if utf8.RuneCountInString(subject) > MaxSubject {
		paras = append(paras, subject)
		subject = string([]rune(subject)[:MaxSubject-1]) + "…"
	}
	for _, p := range m.Body {
		if p = strings.TrimSpace(p); p != "" {
			paras = append(paras, p)
		}
	}
	var tr []string
	for _, t := range m.Trailers {
		if v := strings.Join(strings.Fields(t.Value), " "); v != "" {
			tr = append(tr, t.Key+": "+v)
		}
	}
	if len(tr) > 0 {
		paras = append(paras, strings.Join(tr, "\n"))
	}
	if len(paras) == 0 {
		return subject + "\n"
	}
	return subject + "\n\n" + strings.Join(paras, "\n\n") + "\n"
}

// tidyMessage keeps a message's subject within MaxSubject, whoever wrote
// the message: a longer first line is cut, and kept whole below it. A NUL
// (which a step, a detail or a name may hold: the files keep it exact, as
// JSON's \u0000) is written as U+2400 SYMBOL FOR NULL, and text that is
// not UTF-8 is mended as strings.ToValidUTF8 does: git fsck --strict
// refuses a commit holding a NUL (nulInCommit), and so does every host
// that checks what it receives.
func tidyMessage(msg string) string {
	msg = strings.ReplaceAll(strings.ToValidUTF8(msg, "\uFFFD"), "\x00", "\u2400")
	subject, rest, _ := strings.Cut(msg, "\n")
	if utf8.RuneCountInString(subject) <= MaxSubject {
		return msg
	}
	rest = strings.TrimLeft(rest, "\n")
	m := Message{Subject: subject}
	if rest != "" {
		m.Body = []string{strings.TrimRight(rest, "\n")}
	}
	return m.String()
}

package jsscan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// show writes a token as its kind's letter and its text, with its line
// and column where with says so, and ^ where a line break comes before it.
func show(t Token, with bool) string {
	s := string("IPSTNR"[t.Kind]) + " " + t.Text
	if t.NL {
		s = "^" + s
	}
	if with {
		s += fmt.Sprintf(" @%d:%d", t.Line, t.Col)
	}
	return s
}

func TestScanHardCases(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
		where     bool // compare lines and columns too
	}{
		// Regular expressions against divisions.
		{"divisions", "a / b / c", []string{"I a", "P /", "I b", "P /", "I c"}, false},
		{"division after a closing bracket", "f(x) / 2 + a[0] / 3", []string{"I f", "P (", "I x", "P )", "P /", "N 2", "P +", "I a", "P [", "N 0", "P ]", "P /", "N 3"}, false},
		{"division after a value", `1 / 2 + "s" / 3 + /r/ / 4`, []string{"N 1", "P /", "N 2", "P +", `S "s"`, "P /", "N 3", "P +", "R /r/", "P /", "N 4"}, false},
		{"regex after =", `x = /a\/b[/]c/gi.test(s)`, []string{"I x", "P =", `R /a\/b[/]c/gi`, "P .", "I test", "P (", "I s", "P )"}, false},
		{"regex after a keyword", "return /x/; typeof /y/", []string{"I return", "R /x/", "P ;", "I typeof", "R /y/"}, false},
		{"regex at the start and after (", "/^a/.test(s) && f(/b/)", []string{"R /^a/", "P .", "I test", "P (", "I s", "P )", "P &&", "I f", "P (", "R /b/", "P )"}, false},
		{"regex holding quotes and a comment opener", `s.replace(/"|'|\/\//g, "")`, []string{"I s", "P .", "I replace", "P (", `R /"|'|\/\//g`, "P ,", `S ""`, "P )"}, false},
		{"divide-assign", "a /= 2", []string{"I a", "P /=", "N 2"}, false},

		// Template literals and their ${} expressions.
		{"plain template", "`a ${b} c`", []string{"T `a ${", "I b", "T } c`"}, false},
		{"nested templates", "`a${ {k: `c${d}`}.k }e`", []string{"T `a${", "P {", "I k", "P :", "T `c${", "I d", "T }`", "P }", "P .", "I k", "T }e`"}, false},
		{"escapes in a template", "`\\`${x}\\${y}` / 2", []string{"T `\\`${", "I x", "T }\\${y}`", "P /", "N 2"}, false},
		{"regex inside ${}", "`${/a}/.source}`", []string{"T `${", "R /a}/", "P .", "I source", "T }`"}, false},
		{"template over lines", "`a\nb${x}\n` y\nz", []string{"T `a\nb${ @1:1", "I x @2:4", "T }\n` @2:5", "I y @3:3", "^I z @4:1"}, true},

		// Comments.
		{"comments", "a // c /x/ \"q\n b /* ' ` */ c /**/ / 2", []string{"I a @1:1", "^I b @2:2", "I c @2:14", "P / @2:21", "N 2 @2:23"}, true},
		{"comment across lines sets a line break", "a /* x\n */ b", []string{"I a", "^I b"}, false},
		{"an unclosed comment", "a /* b", []string{"I a"}, false},
		{"comment markers in strings", `"//" + '/*' + x`, []string{`S "//"`, "P +", `S '/*'`, "P +", "I x"}, false},

		// Strings with escapes.
		{"escaped quotes", `'it\'s' + "a\"b" + 'x\\' / 2`, []string{`S 'it\'s'`, "P +", `S "a\"b"`, "P +", `S 'x\\'`, "P /", "N 2"}, false},
		{"escaped line break", "'a\\\nb' c", []string{"S 'a\\\nb' @1:1", "I c @2:4"}, true},
		{"an unclosed string ends at the line", "'abc\nd", []string{"S 'abc @1:1", "^I d @2:1"}, true},

		// Numbers, names, punctuators, columns.
		{"numbers", "1e-5 + 0x1e-5 + .5 + 1_000n", []string{"N 1e-5", "P +", "N 0x1e", "P -", "N 5", "P +", "N .5", "P +", "N 1_000n"}, false},
		{"longest punctuator", "a >>>= b?.c ?? d === e => f...g", []string{"I a", "P >>>=", "I b", "P ?.", "I c", "P ??", "I d", "P ===", "I e", "P =>", "I f", "P ...", "I g"}, false},
		{"private names and $", "this.#x + $y", []string{"I this", "P .", "I #x", "P +", "I $y"}, false},
		{"columns count bytes", "\"é\" x\r\n\ty", []string{`S "é" @1:1`, "I x @1:6", "^I y @2:2"}, true},
	}
	for _, c := range cases {
		var got []string
		for _, tok := range Scan(c.src) {
			got = append(got, show(tok, c.where))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Scan(%q)\n got %q\nwant %q", c.name, c.src, got, c.want)
		}
	}
}

func TestMatching(t *testing.T) {
	toks := Scan("f(a, [b, {c: `${(d)}`}], (e)) + g")
	var texts []string
	for _, tok := range toks {
		texts = append(texts, tok.Text)
	}
	at := func(i int) string { return strings.Join(texts[i:Matching(toks, i)+1], "") }
	if got := at(1); got != "(a,[b,{c:`${(d)}`}],(e))" {
		t.Errorf("the call's ( closes at %q", got)
	}
	if got := at(11); got != "(d)" {
		t.Errorf("the ( inside ${} closes at %q", got)
	}
	if got := Matching(toks, 21); texts[21] != ")" || got != 1 {
		t.Errorf("the call's ) opens at %d, want 1", got)
	}
	if got := Matching(toks, 20); texts[20] != ")" || got != 18 {
		t.Errorf("the ) of (e) opens at %d, want 18", got)
	}
	if got := Matching(Scan("f(a"), 1); got != 2 {
		t.Errorf("an unclosed ( answers %d, want the last index 2", got)
	}
	if got := Matching(Scan("a)"), 1); got != 0 {
		t.Errorf("an unopened ) answers %d, want 0", got)
	}
}

// FuzzScan: Scan never panics, and each token is the text at its line and
// column, after the token before it.
func FuzzScan(f *testing.F) {
	f.Add("x = /a\\/[/]/g.test(`${a / b}`) // c\n/* d */ 'e\\'' + 1e-5")
	f.Add("`a${ {k: `c${d}`}.k }e`")
	f.Add("'unclosed\n\"also")
	f.Fuzz(func(t *testing.T, src string) {
		starts := []int{0} // where each line begins
		for i := 0; i < len(src); i++ {
			if src[i] == '\n' {
				starts = append(starts, i+1)
			}
		}
		end := 0
		for _, tok := range Scan(src) {
			if tok.Line < 1 || tok.Line > len(starts) || tok.Col < 1 {
				t.Fatalf("Scan(%q): %+v is outside the source", src, tok)
			}
			at := starts[tok.Line-1] + tok.Col - 1
			if tok.Text == "" || at < end || !strings.HasPrefix(src[at:], tok.Text) {
				t.Fatalf("Scan(%q): %+v is not the text at its place (after offset %d)", src, tok, end)
			}
			end = at + len(tok.Text)
		}
	})
}

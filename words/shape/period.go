package shape

import (
	"strings"
	"time"
)

// A form is the form of a series' at: a period's, or RFC 3339 without one.
type form int

const (
	formTime form = iota // no period: an RFC 3339 date and time
	formDay
	formWeek
	formMonth
	formQuarter
	formYear
	formUnknown // a period that is no period: its at is not checked
)

func formOf(period string) form {
	switch period {
	case "day":
		return formDay
	case "week":
		return formWeek
	case "month":
		return formMonth
	case "quarter":
		return formQuarter
	case "year":
		return formYear
	}
	return formUnknown
}

// instant is a point in time: seconds since 1970 in UTC and the digits of
// a fraction of a second without trailing zeros, so that two times compare
// exactly, however many digits their fractions have.
type instant struct {
	sec  int64
	frac string
}

func (a instant) after(b instant) bool {
	if a.sec != b.sec {
		return a.sec > b.sec
	}
	return a.frac > b.frac
}

// parseAt reads an at in its form. It gives the instant the at begins and
// "", or the message of the issue.
func parseAt(f form, s string) (instant, string) {
	switch f {
	case formDay:
		return parseDay(s)
	case formWeek:
		return parseWeek(s)
	case formMonth:
		if len(s) != 7 || s[4] != '-' || !digits(s, 0, 4) || !digits(s, 5, 7) {
			return instant{}, msgMonth
		}
		m := num(s, 5, 7)
		if m < 1 || m > 12 {
			return instant{}, msgMonth
		}
		return start(num(s, 0, 4), m, 1), ""
	case formQuarter:
		if len(s) != 7 || s[4] != '-' || s[5] != 'Q' || !digits(s, 0, 4) || s[6] < '1' || s[6] > '4' {
			return instant{}, msgQuarter
		}
		return start(num(s, 0, 4), 3*int(s[6]-'1')+1, 1), ""
	case formYear:
		if len(s) != 4 || !digits(s, 0, 4) {
			return instant{}, msgYear
		}
		return start(num(s, 0, 4), 1, 1), ""
	case formTime:
		return parseTime(s)
	}
	return instant{}, ""
}

func parseDay(s string) (instant, string) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 0, 4) || !digits(s, 5, 7) || !digits(s, 8, 10) {
		return instant{}, msgDay
	}
	y, m, d := num(s, 0, 4), num(s, 5, 7), num(s, 8, 10)
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return instant{}, msgDay
	}
	if n := daysIn(y, m); d > n {
		return instant{}, msgDayOfMonth(y, m, n)
	}
	return start(y, m, d), ""
}

// parseWeek reads an ISO 8601 week: week 1 is the week with the year's
// first Thursday, and weeks begin on Monday.
func parseWeek(s string) (instant, string) {
	if len(s) != 8 || s[4] != '-' || s[5] != 'W' || !digits(s, 0, 4) || !digits(s, 6, 8) {
		return instant{}, msgWeek
	}
	y, w := num(s, 0, 4), num(s, 6, 8)
	if w < 1 || w > 53 {
		return instant{}, msgWeek
	}
	if n := weeksIn(y); w > n {
		return instant{}, msgWeekOfYear(y, n)
	}
	jan4 := time.Date(y, time.January, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday())+6)%7)+7*(w-1))
	return instant{sec: monday.Unix()}, ""
}

// parseTime reads an RFC 3339 date-time (section 5.6): a full date, "T",
// hours, minutes, seconds, an optional fraction, and "Z" or an offset of
// ±hh:mm; "t" and "z" may be written lower case. A leap second (:60) is
// refused, as JavaScript's Date, which folds read these times with, has
// none; so is a day its month lacks.
func parseTime(s string) (instant, string) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' ||
		!digits(s, 0, 4) || !digits(s, 5, 7) || !digits(s, 8, 10) || !digits(s, 11, 13) || !digits(s, 14, 16) || !digits(s, 17, 19) {
		return instant{}, msgTime
	}
	y, mo, d := num(s, 0, 4), num(s, 5, 7), num(s, 8, 10)
	h, mi, sec := num(s, 11, 13), num(s, 14, 16), num(s, 17, 19)
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return instant{}, msgTime
	}
	rest := s[19:]
	frac := ""
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return instant{}, msgTime
		}
		frac = strings.TrimRight(rest[1:i], "0")
		rest = rest[i:]
	}
	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && digits(rest, 1, 3) && digits(rest, 4, 6):
		oh, om := num(rest, 1, 3), num(rest, 4, 6)
		if oh > 23 || om > 59 {
			return instant{}, msgTime
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return instant{}, msgTime
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	return instant{sec: t.Unix() - int64(offset), frac: frac}, ""
}

func start(y, m, d int) instant {
	return instant{sec: time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()}
}

// daysIn gives the days of a month of the Gregorian calendar, leap years
// included.
func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// weeksIn gives the ISO weeks of a year, 52 or 53: 28 December is always
// in the year's last week.
func weeksIn(y int) int {
	_, w := time.Date(y, time.December, 28, 0, 0, 0, 0, time.UTC).ISOWeek()
	return w
}

func digits(s string, from, to int) bool {
	for i := from; i < to; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func num(s string, from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

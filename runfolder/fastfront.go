package runfolder

import "bytes"

// fastFront reads the front matter of a definition.md in the plain form
// quire writes it (every line `key: value`, or `member_of:` and its
// items `- value`), without a YAML parser: it answers false for anything
// else, which ParseFront then reads as YAML. Reading every run's
// definition.md through yaml.v3 (twice: once into a node for its checks,
// once into the struct) was two thirds of rebuilding the runs' facts at
// 100,000 runs, and of the time quire check --full spent in a run folder.
//
// What it takes is what YAML reads the same way into a string: a plain
// scalar of letters, digits and ` _./@+-:` that begins with a letter or
// a digit, never ends in a space, holds no ": " and is none of YAML's
// nulls; or a double-quoted scalar with no escape in it. A key it does
// not know, a key written twice, a comment, a blank line, a tab, a
// carriage return, a flow or block collection of another form: all are
// YAML's to read (and refuse). FuzzFastFront holds it to yaml.v3's answer.
func fastFront(doc []byte) (Front, bool) {
	var fr Front
	rest, ok := bytes.CutPrefix(doc, []byte("---\n"))
	if !ok {
		return fr, false
	}
	seen := 0                // bit i: field i written
	list, indent := false, 0 // in member_of's items, each indent spaces in
	for {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return fr, false // not closed: YAML's words for it
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if string(line) == "---" {
			return fr, !list || len(fr.MemberOf) > 0
		}
		if item, ok := bytes.CutPrefix(bytes.TrimLeft(line, " "), []byte("- ")); ok && list && line[0] == ' ' {
			// Every item as indented as the first: a line indented more
			// is YAML's (it may go on the item before it).
			in := len(line) - len(item) - 2
			if len(fr.MemberOf) == 0 {
				indent = in
			}
			v, ok := fastScalar(item)
			if !ok || in != indent {
				return fr, false
			}
			fr.MemberOf = append(fr.MemberOf, v)
			continue
		}
		if list && len(fr.MemberOf) == 0 {
			return fr, false
		}
		list = false
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return fr, false
		}
		i, dst := fastField(&fr, string(key))
		if i < 0 || seen&(1<<i) != 0 {
			return fr, false
		}
		seen |= 1 << i
		if dst == nil { // member_of
			if len(value) != 0 {
				return fr, false
			}
			list = true
			continue
		}
		v, ok := bytes.CutPrefix(value, []byte(" "))
		if !ok {
			return fr, false
		}
		s, ok := fastScalar(v)
		if !ok {
			return fr, false
		}
		*dst = s
	}
}

// fastField is the field of fr a key names, and its number; dst is nil
// for member_of, the one list; -1 for a key Front has not.
func fastField(fr *Front, key string) (int, *string) {
	switch key {
	case "uid":
		return 0, &fr.UID
	case "type":
		return 1, &fr.Type
	case "name":
		return 2, &fr.Name
	case "created":
		return 3, &fr.Created
	case "playbook":
		return 4, &fr.Playbook
	case "playbook_version":
		return 5, &fr.PlaybookVersion
	case "member_of":
		return 6, nil
	case "binding":
		return 7, &fr.Binding
	case "started":
		return 8, &fr.Started
	case "executor":
		return 9, &fr.Executor
	case "authorized_by":
		return 10, &fr.AuthorizedBy
	case "quire_playbook":
		return 11, &fr.QuirePlaybook
	case "definition_type":
		return 12, &fr.DefinitionType
	case "definition_name":
		return 13, &fr.DefinitionName
	}
	return -1, nil
}

// fastScalar is the string a scalar fastFront takes stands for.
func fastScalar(b []byte) (string, bool) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		in := b[1 : len(b)-1]
		for _, c := range in {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return "", false
			}
		}
		return string(in), true
	}
	if len(b) == 0 || !alnum(b[0]) || b[len(b)-1] == ' ' || bytes.Contains(b, []byte(": ")) || b[len(b)-1] == ':' {
		return "", false
	}
	for _, c := range b {
		if !alnum(c) && !bytes.ContainsRune([]byte(" _./@+-:"), rune(c)) {
			return "", false
		}
	}
	switch string(b) {
	case "null", "Null", "NULL":
		return "", false
	}
	return string(b), true
}

func alnum(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

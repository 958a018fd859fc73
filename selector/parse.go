package selector

import (
	"fmt"
	"slices"
)

// The lexer and parser below are a port of the ones of
// k8s.io/apimachinery/pkg/labels, kept close to the original so that every
// input parses, and fails, the same way with the same message.

type token uint8

const (
	errorToken token = iota
	endOfStringToken
	closedParToken
	commaToken
	doesNotExistToken
	doubleEqualsToken
	equalsToken
	greaterThanToken
	identifierToken
	inToken
	lessThanToken
	notEqualsToken
	notInToken
	openParToken
)

// literalToken maps the literal of every token but identifiers to the token.
func literalToken(s string) (token, bool) {
	switch s {
	case ")":
		return closedParToken, true
	case ",":
		return commaToken, true
	case "!":
		return doesNotExistToken, true
	case "==":
		return doubleEqualsToken, true
	case "=":
		return equalsToken, true
	case ">":
		return greaterThanToken, true
	case "in":
		return inToken, true
	case "<":
		return lessThanToken, true
	case "!=":
		return notEqualsToken, true
	case "notin":
		return notInToken, true
	case "(":
		return openParToken, true
	}
	return 0, false
}

type scannedItem struct {
	tok     token
	literal string
}

func isWhitespace(ch byte) bool {
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'
}

func isSpecialSymbol(ch byte) bool {
	switch ch {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

type lexer struct {
	s   string
	pos int
}

// read returns the next byte, or 0 at the end of the string (a NUL byte in
// the string reads as 0 too, as in apimachinery).
func (l *lexer) read() byte {
	if l.pos < len(l.s) {
		b := l.s[l.pos]
		l.pos++
		return b
	}
	return 0
}

func (l *lexer) unread() { l.pos-- }

func (l *lexer) scanIDOrKeyword() (token, string) {
	start := l.pos
	end := start
	for {
		ch := l.read()
		if ch == 0 {
			break
		}
		if isSpecialSymbol(ch) || isWhitespace(ch) {
			l.unread()
			break
		}
		end = l.pos
	}
	s := l.s[start:end]
	if tok, ok := literalToken(s); ok {
		return tok, s
	}
	return identifierToken, s
}

func (l *lexer) scanSpecialSymbol() (token, string) {
	var last scannedItem
	var buf []byte
	for {
		ch := l.read()
		if ch == 0 {
			break
		}
		if !isSpecialSymbol(ch) {
			l.unread()
			break
		}
		buf = append(buf, ch)
		if tok, ok := literalToken(string(buf)); ok {
			last = scannedItem{tok: tok, literal: string(buf)}
		} else if last.tok != 0 {
			l.unread()
			break
		}
	}
	if last.tok == 0 {
		return errorToken, fmt.Sprintf("error expected: keyword found '%s'", buf)
	}
	return last.tok, last.literal
}

func (l *lexer) lex() (token, string) {
	ch := l.read()
	for isWhitespace(ch) {
		ch = l.read()
	}
	switch {
	case ch == 0:
		return endOfStringToken, ""
	case isSpecialSymbol(ch):
		l.unread()
		return l.scanSpecialSymbol()
	default:
		l.unread()
		return l.scanIDOrKeyword()
	}
}

// context tells whether "in" and "notin" are operators (keyAndOperator) or
// identifiers (values).
type context uint8

const (
	keyAndOperator context = iota
	values
)

type parser struct {
	l        lexer
	items    []scannedItem
	position int
}

func (p *parser) item(i int) (token, string) {
	if i >= len(p.items) {
		return endOfStringToken, ""
	}
	return p.items[i].tok, p.items[i].literal
}

func (p *parser) lookahead(c context) (token, string) {
	tok, lit := p.item(p.position)
	if c == values && (tok == inToken || tok == notInToken) {
		tok = identifierToken
	}
	return tok, lit
}

func (p *parser) consume(c context) (token, string) {
	tok, lit := p.lookahead(c)
	p.position++
	return tok, lit
}

func (p *parser) scan() {
	for {
		tok, lit := p.l.lex()
		p.items = append(p.items, scannedItem{tok, lit})
		if tok == endOfStringToken {
			return
		}
	}
}

// parse returns the requirements in the order written, or apimachinery's
// error message.
func (p *parser) parse() ([]requirement, string) {
	p.scan()
	var reqs []requirement
	for {
		tok, lit := p.lookahead(values)
		switch tok {
		case identifierToken, doesNotExistToken:
			r, msg := p.parseRequirement()
			if msg != "" {
				return nil, "unable to parse requirement: " + msg
			}
			reqs = append(reqs, r)
			t, l := p.consume(values)
			switch t {
			case endOfStringToken:
				return reqs, ""
			case commaToken:
				t2, l2 := p.lookahead(values)
				if t2 != identifierToken && t2 != doesNotExistToken {
					return nil, fmt.Sprintf("found '%s', expected: identifier after ','", l2)
				}
			default:
				return nil, fmt.Sprintf("found '%s', expected: ',' or 'end of string'", l)
			}
		case endOfStringToken:
			return reqs, ""
		default:
			return nil, fmt.Sprintf("found '%s', expected: !, identifier, or 'end of string'", lit)
		}
	}
}

func (p *parser) parseRequirement() (requirement, string) {
	key, op, unary, msg := p.parseKeyAndInferOperator()
	if msg != "" {
		return requirement{}, msg
	}
	if unary {
		return newRequirement(key, op, []string{})
	}
	op, msg = p.parseOperator()
	if msg != "" {
		return requirement{}, msg
	}
	var vals []string
	switch op {
	case opIn, opNotIn:
		vals, msg = p.parseValues()
	default:
		vals, msg = p.parseExactValue()
	}
	if msg != "" {
		return requirement{}, msg
	}
	// sets.String.List: sorted, without duplicates.
	slices.Sort(vals)
	vals = slices.Compact(vals)
	return newRequirement(key, op, vals)
}

// parseKeyAndInferOperator reads [!] KEY; unary reports an Exists or
// DoesNotExist requirement, which has no operator and values to read.
func (p *parser) parseKeyAndInferOperator() (key string, op operator, unary bool, msg string) {
	tok, lit := p.consume(values)
	notExists := false
	if tok == doesNotExistToken {
		notExists = true
		tok, lit = p.consume(values)
	}
	if tok != identifierToken {
		return "", 0, false, fmt.Sprintf("found '%s', expected: identifier", lit)
	}
	// A nil *field.Path prints "<nil>".
	if msg := validateKey(lit, "<nil>"); msg != "" {
		return "", 0, false, msg
	}
	if notExists {
		// apimachinery makes "!key" a DoesNotExist requirement whatever
		// follows it; parse then fails on what follows, if anything.
		return lit, opDoesNotExist, true, ""
	}
	if t, _ := p.lookahead(values); t == endOfStringToken || t == commaToken {
		return lit, opExists, true, ""
	}
	return lit, 0, false, ""
}

func (p *parser) parseOperator() (operator, string) {
	tok, lit := p.consume(keyAndOperator)
	switch tok {
	case inToken:
		return opIn, ""
	case equalsToken:
		return opEquals, ""
	case doubleEqualsToken:
		return opDoubleEquals, ""
	case greaterThanToken:
		return opGreaterThan, ""
	case lessThanToken:
		return opLessThan, ""
	case notInToken:
		return opNotIn, ""
	case notEqualsToken:
		return opNotEquals, ""
	}
	return 0, fmt.Sprintf("found '%s', expected: in, notin, =, ==, !=, gt, lt", lit)
}

func (p *parser) parseValues() ([]string, string) {
	tok, lit := p.consume(values)
	if tok != openParToken {
		return nil, fmt.Sprintf("found '%s' expected: '('", lit)
	}
	tok, lit = p.lookahead(values)
	switch tok {
	case identifierToken, commaToken:
		s, msg := p.parseIdentifiersList()
		if msg != "" {
			return nil, msg
		}
		if tok, _ = p.consume(values); tok != closedParToken {
			return nil, fmt.Sprintf("found '%s', expected: ')'", lit)
		}
		return s, ""
	case closedParToken:
		p.consume(values)
		return []string{""}, ""
	}
	return nil, fmt.Sprintf("found '%s', expected: ',', ')' or identifier", lit)
}

func (p *parser) parseIdentifiersList() ([]string, string) {
	var s []string
	for {
		tok, lit := p.consume(values)
		switch tok {
		case identifierToken:
			s = append(s, lit)
			tok2, lit2 := p.lookahead(values)
			switch tok2 {
			case commaToken:
				continue
			case closedParToken:
				return s, ""
			default:
				return nil, fmt.Sprintf("found '%s', expected: ',' or ')'", lit2)
			}
		case commaToken:
			if len(s) == 0 {
				s = append(s, "")
			}
			tok2, _ := p.lookahead(values)
			if tok2 == closedParToken || tok2 == commaToken {
				s = append(s, "")
			}
			if tok2 == closedParToken {
				return s, ""
			}
		default:
			return nil, fmt.Sprintf("found '%s', expected: ',', or identifier", lit)
		}
	}
}

func (p *parser) parseExactValue() ([]string, string) {
	tok, _ := p.lookahead(values)
	if tok == endOfStringToken || tok == commaToken {
		return []string{""}, ""
	}
	tok, lit := p.consume(values)
	if tok == identifierToken {
		return []string{lit}, ""
	}
	return nil, fmt.Sprintf("found '%s', expected: identifier", lit)
}

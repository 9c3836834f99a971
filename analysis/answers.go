package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Answer is what one interview said in reply to one scripted question: the indexes
// of the participant messages between the interviewer asking it and the next
// scripted question.
type Answer struct {
	Question int   // index into Input.Questions
	Messages []int // indexes into the interview's Messages
}

// AnswersOf maps an interview's participant messages to the scripted questions by
// position: an interviewer message equal to a scripted question (ignoring case,
// spacing and closing punctuation) opens that question's answer, which runs until
// the next scripted question. Probes in between belong to the question they follow.
// It returns one entry per question asked; questions never asked are absent.
func AnswersOf(questions []Question, iv Interview) []Answer {
	return questionKeys(questions).answersOf(iv)
}

// questionIndex maps each scripted question's key to its index (the first, when
// two fold to one key).
type questionIndex map[string]int

func questionKeys(questions []Question) questionIndex {
	keys := make(questionIndex, len(questions))
	for i, q := range questions {
		k := questionKey(q.Text)
		if _, dup := keys[k]; !dup && k != "" {
			keys[k] = i
		}
	}
	return keys
}

// answersOf is AnswersOf over the questions keys was made from.
func (keys questionIndex) answersOf(iv Interview) []Answer {
	if len(keys) == 0 {
		return nil
	}
	var out []Answer
	var buf []byte
	cur := -1
	for mi, m := range iv.Messages {
		switch m.Speaker {
		case SpeakerInterviewer:
			buf = appendQuestionKey(buf[:0], m.Text)
			if qi, ok := keys[string(buf)]; ok {
				out = append(out, Answer{Question: qi})
				cur = len(out) - 1
			}
		case SpeakerParticipant:
			if cur >= 0 {
				out[cur].Messages = append(out[cur].Messages, mi)
			}
		}
	}
	return out
}

// questionKey folds what an interviewer's rendering may change without changing the
// question: case, runs of space, and trailing punctuation.
func questionKey(s string) string { return string(appendQuestionKey(nil, s)) }

// appendQuestionKey appends s's key to buf in one pass, as
// strings.TrimRightFunc(strings.Join(strings.Fields(strings.ToLower(s)), " "),
// punctuation or space) would give it, without the intermediate strings: every
// interviewer message of every interview is folded.
func appendQuestionKey(buf []byte, s string) []byte {
	from, space := len(buf), false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII, most of every transcript: the same lower-casing and spaces as
			// unicode's, without its tables.
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			i++
			if c == ' ' || '\t' <= c && c <= '\r' {
				space = len(buf) > from
				continue
			}
			if space {
				buf, space = append(buf, ' '), false
			}
			buf = append(buf, c)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		r = unicode.ToLower(r)
		if unicode.IsSpace(r) {
			space = len(buf) > from
			continue
		}
		if space {
			buf, space = append(buf, ' '), false
		}
		buf = utf8.AppendRune(buf, r)
	}
	for len(buf) > from {
		r, n := utf8.DecodeLastRune(buf[from:])
		if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
			break
		}
		buf = buf[:len(buf)-n]
	}
	return buf
}

// nonAnswers are replies that decline to answer. "Nothing" or "I don't know" are
// answers (to "what would you change?" they say something), so they are not here.
var nonAnswers = map[string]bool{
	"": true, "skip": true, "pass": true, "no comment": true, "n/a": true, "na": true,
	"i'd rather not say": true, "i would rather not say": true,
	"rather not say": true, "prefer not to say": true, "i prefer not to say": true,
	"no answer": true, "next": true, "next question": true, "skip this": true,
	"skip this one": true, "i'll skip": true, "i'll pass": true, "pass on this one": true,
	"-": true, "no comments": true, "skip it": true, "pass on that": true,
	// The transcript's record of a question the participant skipped with the skip
	// button (moderator.SkippedAnswer, "(skipped)").
	"skipped": true,
}

// maxNonAnswer is the length in bytes of the longest non-answer.
var maxNonAnswer = func() int {
	n := 0
	for k := range nonAnswers {
		n = max(n, len(k))
	}
	return n
}()

// IsNonAnswer reports whether a participant's reply declines the question.
func IsNonAnswer(text string) bool {
	k := strings.TrimFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '\'' && r != '/')
	})
	// Folding keeps every rune that is not space, one for one, and each is at
	// least a byte: a reply with more of them than the longest non-answer has
	// bytes is an answer, and most replies are (this is asked of every one).
	n := 0
	for _, r := range k {
		if !unicode.IsSpace(r) {
			if n++; n > maxNonAnswer {
				return false
			}
		}
	}
	k = strings.ReplaceAll(strings.ToLower(k), "’", "'")
	return nonAnswers[strings.Join(strings.Fields(k), " ")]
}

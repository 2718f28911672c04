package ubl

import (
	"strings"
)

// particle is one element reference of a content model.
type particle struct {
	Name     string
	Min, Max int // Max -1: unbounded
}

// requiredAttr is the attribute the unqualified data type requires.
var requiredAttr = map[string]string{
	"AmountType":       "currencyID",
	"BinaryObjectType": "mimeCode",
	"MeasureType":      "unitCode",
}

// checkSchema validates e and its descendants against the UBL 2.1 content
// models (order, cardinality, unknown elements) and the lexical space of
// the basic components' data types. Findings have rule id XSD. The content
// of ext:ExtensionContent is open (xsd:any, lax) and not checked.
func (v *validator) checkSchema(e *Element) {
	if anyContent[e.Name] {
		return
	}
	if model, ok := contentModels[e.Name]; ok {
		if strings.TrimSpace(e.Text) != "" {
			v.add("XSD", Fatal, e, "element %s has text, but its type allows only elements", e.Name)
		}
		v.checkSequence(e, model)
		for _, k := range e.Kids {
			if _, known := contentModels[k.Name]; known || anyContent[k.Name] || leafTypes[k.Name] != "" {
				v.checkSchema(k)
			}
		}
		return
	}
	typ := leafTypes[e.Name]
	if typ == "" {
		return // reported by the parent's sequence check
	}
	if len(e.Kids) > 0 {
		v.add("XSD", Fatal, e.Kids[0], "element %s has child elements, but its type %s is simple content", e.Name, typ)
	}
	if a := requiredAttr[typ]; a != "" && !e.HasAttr(a) {
		v.add("XSD", Fatal, e, "attribute %s is required on %s (%s)", a, e.Name, typ)
	}
	val := e.Value()
	if !lexicallyValid(typ, val) {
		v.add("XSD", Fatal, e, "value %q of %s is not a valid %s", clip(val, 40), e.Name, strings.TrimSuffix(typ, "Type"))
	}
}

// checkSequence checks the children of e against an xsd:sequence of
// element references with minOccurs/maxOccurs.
func (v *validator) checkSequence(e *Element, model []particle) {
	pi, count := 0, 0
	for _, k := range e.Kids {
		if pi < len(model) && model[pi].Name == k.Name {
			count++
			if p := model[pi]; p.Max >= 0 && count > p.Max {
				v.add("XSD", Fatal, k, "element %s occurs more than %d times in %s", k.Name, p.Max, e.Name)
			}
			continue
		}
		j := -1
		for x := pi + 1; x < len(model); x++ {
			if model[x].Name == k.Name {
				j = x
				break
			}
		}
		if j < 0 {
			if inModel(model[:pi], k.Name) {
				v.add("XSD", Fatal, k, "element %s is out of order in %s (the schema's sequence puts it earlier)", k.Name, e.Name)
			} else {
				v.add("XSD", Fatal, k, "element %s is not allowed in %s", k.Name, e.Name)
			}
			continue
		}
		for x := pi; x < j; x++ {
			n := 0
			if x == pi {
				n = count
			}
			if n < model[x].Min {
				v.add("XSD", Fatal, k, "element %s is missing in %s (expected before %s)", model[x].Name, e.Name, k.Name)
			}
		}
		pi, count = j, 1
	}
	for x := pi; x < len(model); x++ {
		n := 0
		if x == pi {
			n = count
		}
		if n < model[x].Min {
			v.add("XSD", Fatal, e, "element %s is missing in %s", model[x].Name, e.Name)
		}
	}
}

func inModel(ps []particle, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// lexicallyValid checks the value space of the XSD base type (whitespace
// collapsed first, as the schema's facets do).
func lexicallyValid(typ, s string) bool {
	switch typ {
	case "AmountType", "NumericType", "PercentType", "RateType", "QuantityType", "MeasureType", "ValueType":
		return isDecimal(s)
	case "IndicatorType":
		return s == "true" || s == "false" || s == "1" || s == "0"
	case "DateType":
		return isDate(s)
	case "TimeType":
		return isTime(s)
	}
	return true
}

func digitsAt(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for _, c := range s[i : i+n] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// timezone: "", "Z" or ±hh:mm.
func isTimezone(s string) bool {
	return s == "" || s == "Z" || len(s) == 6 && (s[0] == '+' || s[0] == '-') && digitsAt(s, 1, 2) && s[3] == ':' && digitsAt(s, 4, 2)
}

// isDate: xsd:date, YYYY-MM-DD with an optional timezone.
func isDate(s string) bool {
	if len(s) < 10 || !digitsAt(s, 0, 4) || s[4] != '-' || !digitsAt(s, 5, 2) || s[7] != '-' || !digitsAt(s, 8, 2) {
		return false
	}
	y := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	m := int(s[5]-'0')*10 + int(s[6]-'0')
	d := int(s[8]-'0')*10 + int(s[9]-'0')
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days[2] = 29
	}
	return m >= 1 && m <= 12 && d >= 1 && d <= days[m] && isTimezone(s[10:])
}

// isTime: xsd:time, hh:mm:ss(.s+) with an optional timezone.
func isTime(s string) bool {
	if len(s) < 8 || !digitsAt(s, 0, 2) || s[2] != ':' || !digitsAt(s, 3, 2) || s[5] != ':' || !digitsAt(s, 6, 2) {
		return false
	}
	rest := s[8:]
	if strings.HasPrefix(rest, ".") {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	h, m, sec := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0'), int(s[6]-'0')*10+int(s[7]-'0')
	return (h < 24 || h == 24 && m == 0 && sec == 0) && m < 60 && sec < 60 && isTimezone(rest)
}

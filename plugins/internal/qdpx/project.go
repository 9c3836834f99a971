package qdpx

import "encoding/xml"

// The project.qde document, as REFI-QDA's Project.xsd (QDA-XML 1.0) lays it out. Field
// order is element order: the schema's sequences are ordered (Users, CodeBook,
// Variables, Cases, Sources, ..., Description), and encoding/xml writes fields in
// declaration order. Optional elements are pointers or omitempty so an empty one is
// left out rather than written empty where the schema wants at least one child.

// Namespace is the QDA-XML project namespace.
const Namespace = "urn:QDA-XML:project:1.0"

type project struct {
	XMLName      xml.Name   `xml:"urn:QDA-XML:project:1.0 Project"`
	Name         string     `xml:"name,attr"`
	Origin       string     `xml:"origin,attr"`
	CreatingUser string     `xml:"creatingUserGUID,attr"`
	Created      string     `xml:"creationDateTime,attr,omitempty"`
	Users        users      `xml:"Users"`
	CodeBook     *codeBook  `xml:"CodeBook"`
	Variables    *variables `xml:"Variables"`
	Sources      *sources   `xml:"Sources"`
	Description  string     `xml:"Description,omitempty"`
}

type users struct {
	User []user `xml:"User"`
}

type user struct {
	GUID string `xml:"guid,attr"`
	Name string `xml:"name,attr"`
}

type codeBook struct {
	Codes codes `xml:"Codes"`
}

type codes struct {
	Code []*code `xml:"Code"`
}

type code struct {
	GUID        string  `xml:"guid,attr"`
	Name        string  `xml:"name,attr"`
	IsCodable   bool    `xml:"isCodable,attr"`
	Color       string  `xml:"color,attr,omitempty"`
	Description string  `xml:"Description,omitempty"`
	Code        []*code `xml:"Code"`
}

type variables struct {
	Variable []variable `xml:"Variable"`
}

type variable struct {
	GUID string `xml:"guid,attr"`
	Name string `xml:"name,attr"`
	Type string `xml:"typeOfVariable,attr"`
}

type sources struct {
	TextSource []textSource `xml:"TextSource"`
}

type textSource struct {
	GUID          string          `xml:"guid,attr"`
	Name          string          `xml:"name,attr"`
	PlainTextPath string          `xml:"plainTextPath,attr"`
	CreatingUser  string          `xml:"creatingUser,attr"`
	Created       string          `xml:"creationDateTime,attr,omitempty"`
	Description   string          `xml:"Description,omitempty"`
	Selections    []selection     `xml:"PlainTextSelection"`
	Values        []variableValue `xml:"VariableValue"`
}

type selection struct {
	GUID         string   `xml:"guid,attr"`
	Name         string   `xml:"name,attr,omitempty"`
	Start        int      `xml:"startPosition,attr"`
	End          int      `xml:"endPosition,attr"`
	CreatingUser string   `xml:"creatingUser,attr"`
	Created      string   `xml:"creationDateTime,attr,omitempty"`
	Codings      []coding `xml:"Coding"`
}

type coding struct {
	GUID         string `xml:"guid,attr"`
	CreatingUser string `xml:"creatingUser,attr"`
	Created      string `xml:"creationDateTime,attr,omitempty"`
	CodeRef      ref    `xml:"CodeRef"`
}

type ref struct {
	Target string `xml:"targetGUID,attr"`
}

type variableValue struct {
	VariableRef ref    `xml:"VariableRef"`
	TextValue   string `xml:"TextValue"`
}

// Copyright 2011 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

/*
Package template is the standard library's text/template (Go 1.26), copied so that
interviewd/internal/html/template can run on it, with one difference: a template never
calls a method. The language is otherwise the standard library's, documented there.

In the standard library, .Name first looks for a method Name of the value, by name, at
run time (reflect's MethodByName). A program that can reach such a lookup makes the
linker keep every exported method of every type that may be stored in an interface,
because any of them might be called: in interviewd that kept several megabytes of
code nothing calls. Here .Name is a struct field (through pointers and interfaces) or
a map key, and nothing else: a name that is only a method is an execution error
("can't evaluate field Name in type T (templates read fields, map keys and funcs,
never methods)"). A value computed from the data comes from a field set before
execution or from a func in the template's FuncMap (a method expression such as
T.Name is a func of that kind).

The copy also drops what interviewd does not use (ParseFiles, ParseGlob, ParseFS: the
html package parses) and carries the standard library's internal/fmtsort, which
orders the keys of a map a range visits.
*/
package template

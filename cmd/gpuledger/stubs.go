package main

import "errors"

var errUsage = errors.New("usage")

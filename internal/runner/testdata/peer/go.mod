module example.com/relay

go 1.26.0

require github.com/wirebench/wirebench v0.0.0

replace github.com/wirebench/wirebench => ../../../..

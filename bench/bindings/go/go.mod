module fairsem/bench

go 1.19

require fairsem v0.0.0

replace fairsem => ../../../bindings/go

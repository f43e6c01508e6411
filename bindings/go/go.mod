module fairsem

go 1.19

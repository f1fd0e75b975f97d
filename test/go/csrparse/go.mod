module autonode.test/csrparse

go 1.24

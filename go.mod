module github.com/hwcoll/hwcoll

go 1.26

require (
	github.com/fatih/color v1.19.0
	github.com/mattn/go-isatty v0.0.20
	github.com/stretchr/testify v1.12.1
	gopkg.in/yaml.v3 v3.0.1
	pgregory.net/rapid v1.3.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.42.0 // indirect
)

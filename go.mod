module github.com/tracegrid/tracegrid

go 1.26.8

require (
	github.com/asticode/go-astiav v0.16.0 // indirect
	github.com/asticode/go-astikit v0.42.0 // indirect
	github.com/go-gl/gl v0.0.0-20231021071112-07e5d0ea2e71 // indirect
	golang.org/x/image v0.48.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

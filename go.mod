module github.com/agorahq/agora

go 1.26.0

require (
	github.com/google/btree v1.1.3
	github.com/lib/pq v1.12.3
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

package openapi

//go:generate go run ./internal/gen

package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/usid/usid"
)

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// spec loads and validates openapi.yaml once.
func spec(t *testing.T) routers.Router {
	t.Helper()
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(usid.OpenAPI)
		if err != nil {
			specErr = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			specErr = err
			return
		}
		doc.Servers = nil // match any host
		specRouter, specErr = gorillamux.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specRouter
}

func TestOpenAPISpecValidates(t *testing.T) { spec(t) }

// checkedTransport checks every request and response of the REST tests
// against openapi.yaml: no answer may deviate from the spec.
type checkedTransport struct {
	t *testing.T
}

func (c checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	router := spec(c.t)
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		// Keep the request framed by Content-Length, as the caller's was.
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(reqBody)), int64(len(reqBody))
		if len(reqBody) == 0 {
			req.Body = http.NoBody
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))

	route, params, err := router.FindRoute(req)
	if err != nil {
		c.t.Errorf("%s %s: not in openapi.yaml: %v", req.Method, req.URL.Path, err)
		return resp, nil
	}
	// The spec describes valid requests; tests send invalid ones on purpose,
	// so only responses are checked.
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, IncludeResponseStatus: true}}
	in.Request.Body = io.NopCloser(bytes.NewReader(reqBody))
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		c.t.Errorf("%s %s → %d deviates from openapi.yaml: %v\nbody: %.300s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return resp, nil
}

func checkedClient(t *testing.T) *http.Client {
	return &http.Client{Transport: checkedTransport{t}}
}

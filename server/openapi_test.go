package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	specDoc    *openapi3.T
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
		specDoc = doc
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
		c.checkOutsideSpec(req, resp, body, err)
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

// checkOutsideSpec checks the answer to a request the spec has no operation
// for: a path it does not list must get 404, a method it does not list 405
// as the MethodNotAllowed response describes (Allow header, problem JSON).
func (c checkedTransport) checkOutsideSpec(req *http.Request, resp *http.Response, body []byte, routeErr error) {
	want, response := http.StatusNotFound, "NotFound"
	if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
		want, response = http.StatusMethodNotAllowed, "MethodNotAllowed"
	} else if !errors.Is(routeErr, routers.ErrPathNotFound) {
		c.t.Errorf("%s %s: %v", req.Method, req.URL.Path, routeErr)
		return
	}
	if resp.StatusCode != want {
		c.t.Errorf("%s %s is not in openapi.yaml (%v), yet answered %d, want %d", req.Method, req.URL.Path, routeErr, resp.StatusCode, want)
		return
	}
	checkResponseAs(c.t, response, req.Method+" "+req.URL.Path, resp, body)
}

// checkResponseAs checks an answer against a response of the spec's
// components (headers it requires, content type, schema): for answers the
// spec names outside an operation, and for those a test gets on a raw
// connection.
func checkResponseAs(t *testing.T, response, what string, resp *http.Response, body []byte) {
	t.Helper()
	ref := specDoc.Components.Responses[response]
	if ref == nil {
		t.Fatalf("openapi.yaml has no response %s", response)
	}
	r, want := ref.Value, resp.StatusCode
	for name, h := range r.Headers {
		if h.Value.Required && resp.Header.Get(name) == "" {
			t.Errorf("%s → %d without the %s header of the %s response", what, want, name, response)
		}
	}
	mt := r.Content.Get(resp.Header.Get("Content-Type"))
	if mt == nil {
		t.Errorf("%s → %d: Content-Type %q is not the %s response's", what, want, resp.Header.Get("Content-Type"), response)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s → %d: %v", what, want, err)
		return
	}
	if err := mt.Schema.Value.VisitJSON(v); err != nil {
		t.Errorf("%s → %d deviates from the %s response: %v", what, want, response, err)
	}
}

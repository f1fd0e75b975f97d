// csrparse prints how the Kubernetes API server and the kubelet signers read certificate
// signing requests: exactly their calls (k8s.io/kubernetes pkg/apis/certificates
// ParseCSR, then the signer's x509.ParseCertificateRequest and CheckSignature), with this
// toolchain's encoding/pem and crypto/x509. autonode's differential and property tests
// (test/unit/csr/csr-*.test.ts) compare their own reading with this one.
//
// Usage:
//
//	csrparse < requests.jsonl   one {"id","request"} per line, request = base64 of
//	                            spec.request's bytes (the PEM); prints one verdict per line
//	csrparse generate           prints requests made as a kubelet makes them
//	                            (x509.CreateCertificateRequest, as client-go's cert.MakeCSR)
//
// Standard library only, so it builds offline.
package main

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
)

type request struct {
	ID      string `json:"id"`
	Request string `json:"request"`
}

// verdict is one request as Go reads it. Accepted: the API server would store it
// (a first PEM block of type CERTIFICATE REQUEST that x509 parses); what the signer then
// certifies is CommonName, Organizations, the SANs and the key, if SignatureValid.
type verdict struct {
	ID                 string   `json:"id"`
	PemFound           bool     `json:"pemFound"`
	BlockType          string   `json:"blockType"`
	Headers            int      `json:"headers"`
	RestLen            int      `json:"restLen"`
	RestHasBlock       bool     `json:"restHasBlock"`
	Accepted           bool     `json:"accepted"`
	Error              string   `json:"error,omitempty"`
	CommonName         string   `json:"commonName"`
	CommonNames        []string `json:"commonNames"`
	Organizations      []string `json:"organizations"`
	NameTypes          []string `json:"nameTypes"`
	DNSNames           []string `json:"dnsNames"`
	IPAddresses        []string `json:"ipAddresses"`
	EmailAddresses     []string `json:"emailAddresses"`
	URIs               []string `json:"uris"`
	Extensions         []string `json:"extensions"`
	PublicKeyAlgorithm string   `json:"publicKeyAlgorithm"`
	SPKISHA256         string   `json:"spkiSha256"`
	SignatureAlgorithm string   `json:"signatureAlgorithm"`
	SignatureValid     bool     `json:"signatureValid"`
	SignatureError     string   `json:"signatureError,omitempty"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "generate" {
		generate()
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fail("bad input line: %v", err)
		}
		data, err := base64.StdEncoding.DecodeString(r.Request)
		if err != nil {
			fail("%s: request is not base64: %v", r.ID, err)
		}
		if err := enc.Encode(read(r.ID, data)); err != nil {
			fail("write: %v", err)
		}
	}
	if err := in.Err(); err != nil {
		fail("read: %v", err)
	}
}

func read(id string, data []byte) verdict {
	v := verdict{ID: id, CommonNames: []string{}, Organizations: []string{}, NameTypes: []string{}, DNSNames: []string{}, IPAddresses: []string{}, EmailAddresses: []string{}, URIs: []string{}, Extensions: []string{}}
	// The API server's ParseCSR: the FIRST block only; rest is never looked at.
	block, rest := pem.Decode(data)
	v.RestLen = len(rest)
	v.RestHasBlock = bytes.Contains(rest, []byte("-----BEGIN"))
	if block == nil {
		v.Error = "no PEM block"
		return v
	}
	v.PemFound = true
	v.BlockType = block.Type
	v.Headers = len(block.Headers)
	if block.Type != "CERTIFICATE REQUEST" {
		v.Error = "PEM block type must be CERTIFICATE REQUEST"
		return v
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		v.Error = err.Error()
		return v
	}
	v.Accepted = true
	v.CommonName = csr.Subject.CommonName
	for _, atv := range csr.Subject.Names {
		value, isString := atv.Value.(string)
		if !isString {
			value = fmt.Sprintf("%T:%v", atv.Value, atv.Value)
		}
		switch {
		case atv.Type.Equal([]int{2, 5, 4, 3}):
			v.CommonNames = append(v.CommonNames, value)
		case atv.Type.Equal([]int{2, 5, 4, 10}):
			v.Organizations = append(v.Organizations, value)
		}
		v.NameTypes = append(v.NameTypes, atv.Type.String())
	}
	v.DNSNames = append(v.DNSNames, csr.DNSNames...)
	for _, ip := range csr.IPAddresses {
		v.IPAddresses = append(v.IPAddresses, ip.String())
	}
	v.EmailAddresses = append(v.EmailAddresses, csr.EmailAddresses...)
	for _, uri := range csr.URIs {
		v.URIs = append(v.URIs, uri.String())
	}
	for _, ext := range csr.Extensions {
		v.Extensions = append(v.Extensions, ext.Id.String())
	}
	v.PublicKeyAlgorithm = csr.PublicKeyAlgorithm.String()
	sum := sha256.Sum256(csr.RawSubjectPublicKeyInfo)
	v.SPKISHA256 = hex.EncodeToString(sum[:])
	v.SignatureAlgorithm = csr.SignatureAlgorithm.String()
	if err := csr.CheckSignature(); err != nil {
		v.SignatureError = err.Error()
	} else {
		v.SignatureValid = true
	}
	return v
}

// generate prints kubelet-made requests: client (CN + O only) and serving (plus DNS and IP
// SANs), for each key type a kubelet or another Go client could use.
func generate() {
	keys := map[string]func() (crypto.Signer, error){
		"p256":    func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) },
		"p384":    func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P384(), rand.Reader) },
		"rsa2048": func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) },
		"ed25519": func() (crypto.Signer, error) { _, k, err := ed25519.GenerateKey(rand.Reader); return k, err },
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, name := range []string{"p256", "p384", "rsa2048", "ed25519"} {
		key, err := keys[name]()
		if err != nil {
			fail("generate %s: %v", name, err)
		}
		subject := pkix.Name{CommonName: "system:node:ip-10-0-1-5.ec2.internal", Organization: []string{"system:nodes"}}
		for _, kind := range []string{"client", "serving"} {
			template := &x509.CertificateRequest{Subject: subject}
			if kind == "serving" {
				template.DNSNames = []string{"ip-10-0-1-5.ec2.internal"}
				template.IPAddresses = []net.IP{net.ParseIP("10.0.1.5"), net.ParseIP("fd00:ec2::5")}
			}
			der, err := x509.CreateCertificateRequest(rand.Reader, template, key)
			if err != nil {
				fail("generate %s %s: %v", name, kind, err)
			}
			data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
			if err := enc.Encode(request{ID: fmt.Sprintf("go-kubelet-%s-%s", kind, name), Request: base64.StdEncoding.EncodeToString(data)}); err != nil {
				fail("write: %v", err)
			}
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "csrparse: "+format+"\n", args...)
	os.Exit(2)
}

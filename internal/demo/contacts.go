package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// contact is one address-book entry, shaped like the real server's contacts.
type contact struct {
	ID           string   `json:"id"`
	FirstName    string   `json:"firstName"`
	LastName     string   `json:"lastName"`
	FullName     string   `json:"fullName"`
	Organization string   `json:"organization"`
	Emails       []string `json:"emails"`
	Phones       []string `json:"phones"`
}

// contacts is the fictional address book: never modified, so shared by all
// connections without locking. Addresses use example domains and phone
// numbers from the 555-01xx range reserved for fiction.
var contacts = seedContacts()

func seedContacts() []contact {
	cs := []contact{
		{ID: "c-001", FirstName: "Aoife", LastName: "Byrne", Organization: "Threshold Analytics", Emails: []string{"aoife.byrne@example.com"}, Phones: []string{"+1 555-0101"}},
		{ID: "c-002", FirstName: "Cian", LastName: "Murphy", Organization: "Harbour Light Co.", Emails: []string{"cian@example.org", "cian.murphy@example.com"}, Phones: []string{"+1 555-0102"}},
		{ID: "c-003", FirstName: "Siobhán", LastName: "Kelly", Organization: "Fernhill Botanicals", Emails: []string{"siobhan.kelly@example.net"}, Phones: []string{"+1 555-0103", "+1 555-0153"}},
		{ID: "c-004", FirstName: "Éamon", LastName: "Walsh", Organization: "Kilnamona Forge", Emails: []string{"eamon@example.com"}},
		{ID: "c-005", FirstName: "Niamh", LastName: "O'Connor", Organization: "Threshold Analytics", Emails: []string{"niamh.oconnor@example.com"}, Phones: []string{"+1 555-0105"}},
		{ID: "c-006", FirstName: "Darragh", LastName: "Doyle", Organization: "Blackwater Freight", Emails: []string{"d.doyle@example.org"}, Phones: []string{"+1 555-0106"}},
		{ID: "c-007", FirstName: "Anna", LastName: "Ryan", Organization: "Saltmarsh Press", Emails: []string{"anna.ryan@example.net"}, Phones: []string{"+1 555-0107"}},
		{ID: "c-008", FirstName: "Ciarán", LastName: "Brennan", Organization: "Harbour Light Co.", Phones: []string{"+1 555-0108"}},
		{ID: "c-009", FirstName: "Róisín", LastName: "Gallagher", Organization: "Fernhill Botanicals", Emails: []string{"roisin.gallagher@example.com"}, Phones: []string{"+1 555-0109"}},
		{ID: "c-010", FirstName: "Fionn", LastName: "Quinn", Organization: "Corrib Instruments", Emails: []string{"fionn.quinn@example.org"}, Phones: []string{"+1 555-0110"}},
		{ID: "c-011", FirstName: "Méabh", LastName: "Nolan", Organization: "Saltmarsh Press", Emails: []string{"meabh@example.net"}, Phones: []string{"+1 555-0111"}},
		{ID: "c-012", FirstName: "Tadhg", LastName: "Lynch", Organization: "Blackwater Freight", Emails: []string{"tadhg.lynch@example.com"}, Phones: []string{"+1 555-0112", "+1 555-0162"}},
		{ID: "c-013", FirstName: "Clodagh", LastName: "Fitzgerald", Organization: "Corrib Instruments", Emails: []string{"clodagh@example.org"}, Phones: []string{"+1 555-0113"}},
		{ID: "c-014", FirstName: "Oisín", LastName: "Kavanagh", Organization: "Kilnamona Forge", Emails: []string{"oisin.kavanagh@example.com"}, Phones: []string{"+1 555-0114"}},
		{ID: "c-015", FirstName: "Gráinne", LastName: "Duffy", Organization: "Threshold Analytics", Emails: []string{"grainne@example.net"}, Phones: []string{"+1 555-0115"}},
		{ID: "c-016", FirstName: "Pádraig", LastName: "Burke", Organization: "Example Cooperative", Emails: []string{"padraig.burke@example.org"}},
		{ID: "c-017", FirstName: "Sorcha", LastName: "Hayes", Organization: "Harbour Light Co.", Emails: []string{"sorcha.hayes@example.com"}, Phones: []string{"+1 555-0117"}},
		{ID: "c-018", FirstName: "Colm", LastName: "Daly", Organization: "Saltmarsh Press", Emails: []string{"colm@example.net"}, Phones: []string{"+1 555-0118"}},
		{ID: "c-019", FirstName: "Ailbhe", LastName: "Moran", Organization: "Fernhill Botanicals", Emails: []string{"ailbhe.moran@example.org"}, Phones: []string{"+1 555-0119"}},
		{ID: "c-020", FirstName: "Ruairí", LastName: "Whelan", Organization: "Corrib Instruments", Emails: []string{"ruairi@example.com"}, Phones: []string{"+1 555-0120"}},
		{ID: "c-021", FirstName: "Caoimhe", LastName: "Foley", Organization: "Blackwater Freight", Emails: []string{"caoimhe.foley@example.net"}, Phones: []string{"+1 555-0121"}},
		{ID: "c-022", FirstName: "Donal", LastName: "Keane", Organization: "Kilnamona Forge", Emails: []string{"donal.keane@example.org"}, Phones: []string{"+1 555-0122"}},
		{ID: "c-023", FirstName: "Saoirse", LastName: "Power", Organization: "Threshold Analytics", Emails: []string{"saoirse@example.com", "s.power@example.net"}, Phones: []string{"+1 555-0123"}},
		{ID: "c-024", FirstName: "Lorcan", LastName: "Reilly", Organization: "Example Cooperative", Phones: []string{"+1 555-0124"}},
		{ID: "c-025", FirstName: "Bríd", LastName: "Sheehan", Organization: "Saltmarsh Press", Emails: []string{"brid.sheehan@example.com"}, Phones: []string{"+1 555-0125"}},
	}
	for i := range cs {
		c := &cs[i]
		c.FullName = c.FirstName + " " + c.LastName
		// Empty lists are [] on the wire, never null.
		if c.Emails == nil {
			c.Emails = []string{}
		}
		if c.Phones == nil {
			c.Phones = []string{}
		}
	}
	return cs
}

// addressBook is n contacts made from the demo's own: the same shapes,
// with ids, names and addresses numbered so that none repeats.
func addressBook(n int) []contact {
	book := make([]contact, n)
	for i := range book {
		c := contacts[i%len(contacts)]
		c.ID = fmt.Sprintf("c-%05d", i+1)
		c.LastName = fmt.Sprintf("%s %d", c.LastName, i/len(contacts)+1)
		c.FullName = c.FirstName + " " + c.LastName
		c.Emails = []string{fmt.Sprintf("person%05d@example.com", i+1)}
		book[i] = c
	}
	return book
}

// contactBook is the address book contacts.list serves: the demo's
// contacts, or when size is over 0 (Options.AddressBook) that many made up
// from them, made once.
type contactBook struct {
	size int
	once sync.Once
	made []contact
}

// all returns the size contacts, made on first use.
func (b *contactBook) all() []contact {
	b.once.Do(func() { b.made = addressBook(b.size) })
	return b.made
}

type listParams struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

type listResult struct {
	Contacts []contact `json:"contacts"`
	Count    int       `json:"count"` // all contacts, not just this page
	Limit    int       `json:"limit"`
	Offset   int       `json:"offset"`
}

func (b *contactBook) contactsList(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := listParams{Limit: defaultListLimit}
	contacts := contacts
	if b.size > 0 {
		// The real server's list: whole unless a limit is given.
		contacts, p.Limit = b.all(), b.size
	}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Limit < 1 {
		return nil, invalidParams("limit must be at least 1")
	}
	if p.Offset < 0 {
		return nil, invalidParams("offset must not be negative")
	}
	lo := min(p.Offset, len(contacts))
	hi := lo + min(p.Limit, len(contacts)-lo)
	return marshalResult(listResult{Contacts: contacts[lo:hi], Count: len(contacts), Limit: p.Limit, Offset: p.Offset})
}

type getParams struct {
	ID string `json:"id"`
}

func contactsGet(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p getParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, invalidParams("missing required param: id")
	}
	for i := range contacts {
		if contacts[i].ID == p.ID {
			return marshalResult(&contacts[i])
		}
	}
	return nil, &rpcError{Code: codeNotFound, Message: "contact not found: " + p.ID}
}

type searchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

type searchResult struct {
	Query    string    `json:"query"`
	Contacts []contact `json:"contacts"`
	Count    int       `json:"count"` // contacts returned
}

func contactsSearch(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := searchParams{Limit: defaultFindLimit}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Query == "" {
		return nil, invalidParams("missing required param: query")
	}
	if p.Limit < 1 {
		return nil, invalidParams("limit must be at least 1")
	}
	lq := strings.ToLower(p.Query)
	found := make([]contact, 0, min(p.Limit, len(contacts)))
	for i := range contacts {
		if len(found) == p.Limit {
			break
		}
		if contacts[i].matches(lq) {
			found = append(found, contacts[i])
		}
	}
	return marshalResult(searchResult{Query: p.Query, Contacts: found, Count: len(found)})
}

// matches reports whether the lower-case query lq occurs, ignoring case, in
// the contact's name, organization or email addresses.
func (c *contact) matches(lq string) bool {
	for _, f := range [...]string{c.FullName, c.Organization} {
		if strings.Contains(strings.ToLower(f), lq) {
			return true
		}
	}
	for _, e := range c.Emails {
		if strings.Contains(strings.ToLower(e), lq) {
			return true
		}
	}
	return false
}

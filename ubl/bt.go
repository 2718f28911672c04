package ubl

// Business terms of EN 16931 and where UBL 2.1 carries them (the syntax
// binding of EN 16931-3-2). The JSON view keys values by these BT ids; a
// group (BG-20 allowances, BG-21 charges, BG-23 VAT breakdown, BG-24
// attachments, BG-25 lines) is an array of objects keyed the same way.
// A path ending in "@name" is that attribute of the element.
type term struct {
	BT    string
	Path  string
	Multi bool // the term repeats (BT-22 notes): a JSON array
}

const (
	seller = "cac:AccountingSupplierParty/cac:Party/"
	buyer  = "cac:AccountingCustomerParty/cac:Party/"
	vatTS  = "[cac:TaxScheme/cbc:ID=VAT]"
	notVAT = "[cac:TaxScheme/cbc:ID!=VAT]"
)

var documentTerms = []term{
	{"BT-1", "cbc:ID", false},
	{"BT-2", "cbc:IssueDate", false},
	{"BT-3", "cbc:InvoiceTypeCode|cbc:CreditNoteTypeCode", false},
	{"BT-5", "cbc:DocumentCurrencyCode", false},
	{"BT-6", "cbc:TaxCurrencyCode", false},
	{"BT-7", "cbc:TaxPointDate", false},
	{"BT-8", "cac:InvoicePeriod/cbc:DescriptionCode", false},
	{"BT-9", "cbc:DueDate", false},
	{"BT-9", "cac:PaymentMeans/cbc:PaymentDueDate", false}, // CreditNote
	{"BT-10", "cbc:BuyerReference", false},
	{"BT-11", "cac:ProjectReference/cbc:ID", false},
	{"BT-12", "cac:ContractDocumentReference/cbc:ID", false},
	{"BT-13", "cac:OrderReference/cbc:ID", false},
	{"BT-14", "cac:OrderReference/cbc:SalesOrderID", false},
	{"BT-15", "cac:ReceiptDocumentReference/cbc:ID", false},
	{"BT-16", "cac:DespatchDocumentReference/cbc:ID", false},
	{"BT-17", "cac:OriginatorDocumentReference/cbc:ID", false},
	{"BT-19", "cbc:AccountingCost", false},
	{"BT-20", "cac:PaymentTerms/cbc:Note", false},
	{"BT-22", "cbc:Note", true},
	{"BT-23", "cbc:ProfileID", false},
	{"BT-24", "cbc:CustomizationID", false},
	{"BT-25", "cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID", true},
	{"BT-26", "cac:BillingReference/cac:InvoiceDocumentReference/cbc:IssueDate", true},
	{"BT-27", seller + "cac:PartyLegalEntity/cbc:RegistrationName", false},
	{"BT-28", seller + "cac:PartyName/cbc:Name", false},
	{"BT-29", seller + "cac:PartyIdentification/cbc:ID", true},
	{"BT-29-scheme", seller + "cac:PartyIdentification/cbc:ID/@schemeID", true},
	{"BT-30", seller + "cac:PartyLegalEntity/cbc:CompanyID", false},
	{"BT-31", seller + "cac:PartyTaxScheme" + vatTS + "/cbc:CompanyID", false},
	{"BT-32", seller + "cac:PartyTaxScheme" + notVAT + "/cbc:CompanyID", false},
	{"BT-33", seller + "cac:PartyLegalEntity/cbc:CompanyLegalForm", false},
	{"BT-34", seller + "cbc:EndpointID", false},
	{"BT-34-scheme", seller + "cbc:EndpointID/@schemeID", false},
	{"BT-35", seller + "cac:PostalAddress/cbc:StreetName", false},
	{"BT-36", seller + "cac:PostalAddress/cbc:AdditionalStreetName", false},
	{"BT-162", seller + "cac:PostalAddress/cac:AddressLine/cbc:Line", false},
	{"BT-37", seller + "cac:PostalAddress/cbc:CityName", false},
	{"BT-38", seller + "cac:PostalAddress/cbc:PostalZone", false},
	{"BT-39", seller + "cac:PostalAddress/cbc:CountrySubentity", false},
	{"BT-40", seller + "cac:PostalAddress/cac:Country/cbc:IdentificationCode", false},
	{"BT-41", seller + "cac:Contact/cbc:Name", false},
	{"BT-42", seller + "cac:Contact/cbc:Telephone", false},
	{"BT-43", seller + "cac:Contact/cbc:ElectronicMail", false},
	{"BT-44", buyer + "cac:PartyLegalEntity/cbc:RegistrationName", false},
	{"BT-45", buyer + "cac:PartyName/cbc:Name", false},
	{"BT-46", buyer + "cac:PartyIdentification/cbc:ID", false},
	{"BT-47", buyer + "cac:PartyLegalEntity/cbc:CompanyID", false},
	{"BT-48", buyer + "cac:PartyTaxScheme" + vatTS + "/cbc:CompanyID", false},
	{"BT-49", buyer + "cbc:EndpointID", false},
	{"BT-49-scheme", buyer + "cbc:EndpointID/@schemeID", false},
	{"BT-50", buyer + "cac:PostalAddress/cbc:StreetName", false},
	{"BT-51", buyer + "cac:PostalAddress/cbc:AdditionalStreetName", false},
	{"BT-163", buyer + "cac:PostalAddress/cac:AddressLine/cbc:Line", false},
	{"BT-52", buyer + "cac:PostalAddress/cbc:CityName", false},
	{"BT-53", buyer + "cac:PostalAddress/cbc:PostalZone", false},
	{"BT-54", buyer + "cac:PostalAddress/cbc:CountrySubentity", false},
	{"BT-55", buyer + "cac:PostalAddress/cac:Country/cbc:IdentificationCode", false},
	{"BT-56", buyer + "cac:Contact/cbc:Name", false},
	{"BT-57", buyer + "cac:Contact/cbc:Telephone", false},
	{"BT-58", buyer + "cac:Contact/cbc:ElectronicMail", false},
	{"BT-59", "cac:PayeeParty/cac:PartyName/cbc:Name", false},
	{"BT-60", "cac:PayeeParty/cac:PartyIdentification/cbc:ID", false},
	{"BT-61", "cac:PayeeParty/cac:PartyLegalEntity/cbc:CompanyID", false},
	{"BT-62", "cac:TaxRepresentativeParty/cac:PartyName/cbc:Name", false},
	{"BT-63", "cac:TaxRepresentativeParty/cac:PartyTaxScheme" + vatTS + "/cbc:CompanyID", false},
	{"BT-70", "cac:Delivery/cac:DeliveryParty/cac:PartyName/cbc:Name", false},
	{"BT-71", "cac:Delivery/cac:DeliveryLocation/cbc:ID", false},
	{"BT-72", "cac:Delivery/cbc:ActualDeliveryDate", false},
	{"BT-73", "cac:InvoicePeriod/cbc:StartDate", false},
	{"BT-74", "cac:InvoicePeriod/cbc:EndDate", false},
	{"BT-75", "cac:Delivery/cac:DeliveryLocation/cac:Address/cbc:StreetName", false},
	{"BT-77", "cac:Delivery/cac:DeliveryLocation/cac:Address/cbc:CityName", false},
	{"BT-78", "cac:Delivery/cac:DeliveryLocation/cac:Address/cbc:PostalZone", false},
	{"BT-80", "cac:Delivery/cac:DeliveryLocation/cac:Address/cac:Country/cbc:IdentificationCode", false},
	{"BT-81", "cac:PaymentMeans/cbc:PaymentMeansCode", false},
	{"BT-82", "cac:PaymentMeans/cbc:PaymentMeansCode/@name", false},
	{"BT-83", "cac:PaymentMeans/cbc:PaymentID", false},
	{"BT-84", "cac:PaymentMeans/cac:PayeeFinancialAccount/cbc:ID", true},
	{"BT-85", "cac:PaymentMeans/cac:PayeeFinancialAccount/cbc:Name", true},
	{"BT-86", "cac:PaymentMeans/cac:PayeeFinancialAccount/cac:FinancialInstitutionBranch/cbc:ID", true},
	{"BT-87", "cac:PaymentMeans/cac:CardAccount/cbc:PrimaryAccountNumberID", false},
	{"BT-89", "cac:PaymentMeans/cac:PaymentMandate/cbc:ID", false},
	{"BT-91", "cac:PaymentMeans/cac:PaymentMandate/cac:PayerFinancialAccount/cbc:ID", false},
	{"BT-106", "cac:LegalMonetaryTotal/cbc:LineExtensionAmount", false},
	{"BT-107", "cac:LegalMonetaryTotal/cbc:AllowanceTotalAmount", false},
	{"BT-108", "cac:LegalMonetaryTotal/cbc:ChargeTotalAmount", false},
	{"BT-109", "cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount", false},
	{"BT-112", "cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount", false},
	{"BT-113", "cac:LegalMonetaryTotal/cbc:PrepaidAmount", false},
	{"BT-114", "cac:LegalMonetaryTotal/cbc:PayableRoundingAmount", false},
	{"BT-115", "cac:LegalMonetaryTotal/cbc:PayableAmount", false},
}

// BT-110 and BT-111 (total VAT in document and tax currency) are the
// TaxTotal/TaxAmount whose currencyID is BT-5 and BT-6: see docTerms.

var allowanceChargeTerms = map[bool][]term{
	false: { // BG-20 document level allowance
		{"BT-92", "cbc:Amount", false},
		{"BT-93", "cbc:BaseAmount", false},
		{"BT-94", "cbc:MultiplierFactorNumeric", false},
		{"BT-95", "cac:TaxCategory/cbc:ID", false},
		{"BT-96", "cac:TaxCategory/cbc:Percent", false},
		{"BT-97", "cbc:AllowanceChargeReason", false},
		{"BT-98", "cbc:AllowanceChargeReasonCode", false},
	},
	true: { // BG-21 document level charge
		{"BT-99", "cbc:Amount", false},
		{"BT-100", "cbc:BaseAmount", false},
		{"BT-101", "cbc:MultiplierFactorNumeric", false},
		{"BT-102", "cac:TaxCategory/cbc:ID", false},
		{"BT-103", "cac:TaxCategory/cbc:Percent", false},
		{"BT-104", "cbc:AllowanceChargeReason", false},
		{"BT-105", "cbc:AllowanceChargeReasonCode", false},
	},
}

var vatBreakdownTerms = []term{ // BG-23, one per cac:TaxTotal/cac:TaxSubtotal
	{"BT-116", "cbc:TaxableAmount", false},
	{"BT-117", "cbc:TaxAmount", false},
	{"BT-118", "cac:TaxCategory/cbc:ID", false},
	{"BT-119", "cac:TaxCategory/cbc:Percent", false},
	{"BT-120", "cac:TaxCategory/cbc:TaxExemptionReason", false},
	{"BT-121", "cac:TaxCategory/cbc:TaxExemptionReasonCode", false},
}

var attachmentTerms = []term{ // BG-24, one per cac:AdditionalDocumentReference
	{"BT-122", "cbc:ID", false},
	{"BT-123", "cbc:DocumentDescription", false},
	{"BT-124", "cac:Attachment/cac:ExternalReference/cbc:URI", false},
	{"BT-125-mime", "cac:Attachment/cbc:EmbeddedDocumentBinaryObject/@mimeCode", false},
	{"BT-125-filename", "cac:Attachment/cbc:EmbeddedDocumentBinaryObject/@filename", false},
}

var lineTerms = []term{ // BG-25, one per cac:InvoiceLine or cac:CreditNoteLine
	{"BT-126", "cbc:ID", false},
	{"BT-127", "cbc:Note", false},
	{"BT-128", "cac:DocumentReference/cbc:ID", false},
	{"BT-129", "cbc:InvoicedQuantity|cbc:CreditedQuantity", false},
	{"BT-130", "cbc:InvoicedQuantity|cbc:CreditedQuantity/@unitCode", false},
	{"BT-131", "cbc:LineExtensionAmount", false},
	{"BT-132", "cac:OrderLineReference/cbc:LineID", false},
	{"BT-133", "cbc:AccountingCost", false},
	{"BT-134", "cac:InvoicePeriod/cbc:StartDate", false},
	{"BT-135", "cac:InvoicePeriod/cbc:EndDate", false},
	{"BT-146", "cac:Price/cbc:PriceAmount", false},
	{"BT-147", "cac:Price/cac:AllowanceCharge/cbc:Amount", false},
	{"BT-148", "cac:Price/cac:AllowanceCharge/cbc:BaseAmount", false},
	{"BT-149", "cac:Price/cbc:BaseQuantity", false},
	{"BT-150", "cac:Price/cbc:BaseQuantity/@unitCode", false},
	{"BT-151", "cac:Item/cac:ClassifiedTaxCategory/cbc:ID", false},
	{"BT-152", "cac:Item/cac:ClassifiedTaxCategory/cbc:Percent", false},
	{"BT-153", "cac:Item/cbc:Name", false},
	{"BT-154", "cac:Item/cbc:Description", false},
	{"BT-155", "cac:Item/cac:SellersItemIdentification/cbc:ID", false},
	{"BT-156", "cac:Item/cac:BuyersItemIdentification/cbc:ID", false},
	{"BT-157", "cac:Item/cac:StandardItemIdentification/cbc:ID", false},
	{"BT-158", "cac:Item/cac:CommodityClassification/cbc:ItemClassificationCode", true},
	{"BT-159", "cac:Item/cac:OriginCountry/cbc:IdentificationCode", false},
}

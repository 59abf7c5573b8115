/** A document id as the store makes them ("doc_" + a 9-character time part + 12 random characters). */
export const DOCUMENT_ID = /^doc_[0-9a-z]{9}[0-9A-Za-z]{12}$/;

import { keccak256, recoverAddress, serializeTransaction, type Hex, type TransactionSerializable } from 'viem'

/**
 * - `valid`: the fields hash to the transaction's hash and the signature recovers its sender;
 * - `invalid`: they do not (a provider altered the transaction, or sent another one under its hash);
 * - `unsupported`: a transaction type this check does not know (e.g. a rollup's deposit, unsigned).
 */
export type SignedCheck = 'valid' | 'invalid' | 'unsupported'

/** A transaction as an RPC returns it (viem's `Transaction` fits). */
export interface SignedTransactionFields {
  hash: string
  from: string
  type?: string
  chainId?: number
  nonce: number | bigint
  to: string | null
  value: bigint
  input: string
  gas?: bigint
  gasPrice?: bigint
  maxFeePerGas?: bigint
  maxPriorityFeePerGas?: bigint
  maxFeePerBlobGas?: bigint
  accessList?: readonly unknown[]
  blobVersionedHashes?: readonly string[]
  authorizationList?: readonly unknown[]
  r?: string
  s?: string
  v?: bigint
  yParity?: number
}

const KNOWN_TYPES = new Set(['legacy', 'eip2930', 'eip1559', 'eip4844', 'eip7702'])

/**
 * The transaction's signed fields and signature as viem serializes them; undefined for a type this
 * check does not know (e.g. a rollup's deposit, unsigned).
 */
function signedParts(tx: SignedTransactionFields) {
  const type = tx.type ?? 'legacy'
  if (!KNOWN_TYPES.has(type) || tx.r === undefined || tx.s === undefined) return undefined
  const v = tx.v === undefined ? undefined : BigInt(tx.v)
  // A legacy transaction names its chain only in v (EIP-155); before EIP-155 it names none.
  const chainId = type === 'legacy' ? (v !== undefined && v >= 35n ? Number((v - 35n) / 2n) : undefined) : tx.chainId
  const fields = {
    type,
    chainId,
    nonce: Number(tx.nonce),
    to: tx.to ?? undefined,
    value: tx.value,
    data: tx.input as Hex,
    gas: tx.gas,
    gasPrice: type === 'legacy' || type === 'eip2930' ? tx.gasPrice : undefined,
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
    maxFeePerBlobGas: tx.maxFeePerBlobGas,
    accessList: tx.accessList,
    blobVersionedHashes: tx.blobVersionedHashes,
    authorizationList: tx.authorizationList,
  } as unknown as TransactionSerializable
  const signature = { r: tx.r as Hex, s: tx.s as Hex, v, yParity: tx.yParity } as Parameters<typeof serializeTransaction>[1] & {}
  return { fields, signature }
}

/**
 * Checks locally that a transaction's signed fields (nonce, receiver, value, input, fees, chain,
 * signature) are the ones its hash names: one Keccak hash, ~0.02 ms. The sender is not among the
 * hashed fields; `recoverTransactionSender` derives it (~1.8 ms of secp256k1 on this machine, which is
 * why the quorum takes the sender from the receipts of independent providers instead).
 */
export function checkTransactionHash(tx: SignedTransactionFields): SignedCheck {
  try {
    const parts = signedParts(tx)
    if (!parts) return 'unsupported'
    return keccak256(serializeTransaction(parts.fields, parts.signature)).toLowerCase() === tx.hash.toLowerCase() ? 'valid' : 'invalid'
  } catch {
    // Fields that do not even serialize (e.g. a fee field removed) are no transaction of that hash.
    return 'invalid'
  }
}

/** The address whose key signed the transaction; undefined for an unknown type or a malformed signature. */
export async function recoverTransactionSender(tx: SignedTransactionFields): Promise<string | undefined> {
  try {
    const parts = signedParts(tx)
    if (!parts) return undefined
    return (await recoverAddress({ hash: keccak256(serializeTransaction(parts.fields)), signature: parts.signature })).toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * Checks locally that a transaction is the one its hash names: its signed fields hash to it and its
 * signature recovers its sender. A valid transaction's sender, nonce, receiver and value are then
 * fixed by the hash alone.
 */
export async function checkSignedTransaction(tx: SignedTransactionFields): Promise<SignedCheck> {
  const hashed = checkTransactionHash(tx)
  if (hashed !== 'valid') return hashed
  return (await recoverTransactionSender(tx)) === tx.from.toLowerCase() ? 'valid' : 'invalid'
}

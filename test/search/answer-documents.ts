/**
 * Documents whose answer sits mid-chunk, after filler that shares the question's words, and the question a person
 * would ask in other words than the answer's (naming the document's topic, as one does: "in the park", "hotel").
 * One chunk each (under 256 tokens), each on its own topic.
 */
export interface AnswerDocument {
  question: string;
  before: string;
  answer: string;
  after: string;
}

export const ANSWER_DOCUMENTS: AnswerDocument[] = [
  {
    question: 'do I get money for cycling to the office',
    before:
      'This part of the handbook describes the benefits that come with working at the Lisbon office. The office building opens at eight in the morning and closes at seven in the evening. ' +
      'Money for office supplies is requested through the purchasing portal, not through your manager. Lockers on the ground floor are assigned by reception for a whole year at a time.',
    answer: 'Staff who cycle to the office receive 35 euros a month towards their bicycle.',
    after: 'Showers are on the second floor next to the meeting rooms. Visitors must sign in at reception and wear a badge at all times. Questions about any of these rules go to the people team.',
  },
  {
    question: 'how much did the deep sea vent trip cost',
    before:
      'The survey ship left Ponta Delgada in late April with a crew of forty-two scientists and engineers. The deep sea cameras were calibrated during the first week, while the ship crossed the ridge. ' +
      'Weather delayed the vent dives by four days, and two instruments had to be repaired on board. The trip also trained six doctoral students in handling the remotely operated vehicle.',
    answer: 'All told, the hydrothermal vent expedition cost 4.2 million euros, most of it ship time.',
    after: 'Samples from the vents are stored at the institute in Kiel. The next survey is planned for the autumn of 2025, subject to funding.',
  },
  {
    question: 'how often do I have to update my password',
    before:
      'Every account in the company directory belongs to exactly one person and must never be shared. Laptops lock themselves after five minutes without input, and screens should be locked by hand when you leave your desk. ' +
      'Security incidents are reported to the service desk by phone, day or night. Software may be installed only from the company catalogue.',
    answer: 'Passwords must be changed every ninety days and may not repeat any of the last twelve.',
    after: 'Two-factor sign-in is required for e-mail and for the VPN. USB sticks from unknown sources must be handed to the service desk unopened.',
  },
  {
    question: 'is there vegetarian food at lunch',
    before:
      'The canteen on the fourth floor serves breakfast from half past seven and lunch from noon until two. Prices are subsidised for employees and interns, and payment is by badge only. ' +
      'Trays go back to the racks by the exit, and the dishwashers are emptied by the kitchen staff. Seating near the windows is reserved for visitors on Thursdays.',
    answer: 'A meat-free main course is offered every day, and vegan dishes are marked with a green leaf.',
    after: 'Allergens are listed on the weekly menu posted at the entrance. Special diets can be ordered a day in advance from the chef.',
  },
  {
    question: 'how long can a mother or father stay home on leave after having a baby',
    before:
      'This policy applies to all permanent employees after their probation period. Requests are filed in the HR system at least two months before the planned start. ' +
      'Managers must confirm a request within ten working days, and may only refuse it for reasons stated in writing. Part-time work after a leave is arranged with the team lead.',
    answer: 'New parents may take up to sixteen weeks of paid leave within the first year after a birth or adoption.',
    after: 'Holiday days keep accruing during the leave. The pension contributions are paid by the company in full.',
  },
  {
    question: 'what temperature is the machine room kept at',
    before:
      'Access to the data centre requires a badge and a PIN, and every visit is logged by the security desk. Cables are labelled at both ends with the rack and port number. ' +
      'Spare disks are kept in the locked cabinet next to the door, together with the inventory list. Changes to the network are announced a week ahead on the operations channel.',
    answer: 'The cooling system keeps the server hall between 18 and 24 degrees Celsius, and an alarm sounds above 27.',
    after: 'Fire suppression uses inert gas, so the hall must be evacuated when the siren starts. Generators are tested on the first Monday of each month.',
  },
  {
    question: 'what is the fine for bringing a book back late',
    before:
      'Library cards are free for residents and cost ten euros a year for everyone else. Up to fifteen items can be borrowed at once, including magazines and films. ' +
      'Books are lent for three weeks, films for one week, and loans can be extended online twice. Quiet rooms on the upper floor may be booked for two hours at a time.',
    answer: 'Items returned after the due date are charged twenty cents per day, up to a maximum of five euros.',
    after: 'Lost items are replaced at their list price. The reading room closes thirty minutes before the building does.',
  },
  {
    question: 'who pays for the heating check-up',
    before:
      'Rent is due on the first working day of each month and is paid by bank transfer. The caretaker lives in flat 1A and can be reached on weekdays between nine and five. ' +
      'Bicycles must be parked in the courtyard shed, never in the stairwell. Rubbish is collected on Tuesdays and Fridays; glass goes to the container at the corner.',
    answer: "The gas boiler in every flat is serviced once a year by the landlord's engineer, free of charge to tenants.",
    after: 'Tenants must give access for the service on the date announced by letter. Smoke detectors are checked at the same visit.',
  },
  {
    question: 'how much compensation for a delayed short flight',
    before:
      'This leaflet summarises your rights when you fly from an airport in the European Union. Keep your boarding pass and any receipts, since airlines ask for them with every claim. ' +
      'If you are denied boarding against your will, ask the airline staff for a written statement of the reasons. Meals and drinks must be offered while you wait at the airport.',
    answer: 'When a flight of under 1,500 kilometres lands more than three hours late, each passenger is owed 250 euros.',
    after: 'Claims are made to the airline first and then to the national enforcement body. Extraordinary circumstances such as storms exempt the airline.',
  },
  {
    question: 'how frequently should I water a cactus',
    before:
      'Most indoor plants prefer bright light that does not fall directly on their leaves. Turn the pots a quarter turn every week, so that the plants grow evenly. ' +
      'Repot young plants each spring in a pot one size larger, with fresh soil. Dust on broad leaves can be wiped off with a damp cloth.',
    answer: 'Succulents should get water only once the soil has dried out completely, roughly every two to three weeks.',
    after: 'Ferns, on the other hand, like their soil moist and the air humid. Yellow leaves usually mean too much water rather than too little.',
  },
  {
    question: 'what is the minimum age to hire a car',
    before:
      'The rental period starts when the keys are handed over and ends when the car is returned to the branch. The car must be returned with a full tank, otherwise refuelling is charged at the pump price plus a fee. ' +
      "Smoking and pets are not allowed in any of our vehicles. A credit card in the driver's name is needed for the deposit.",
    answer: 'Drivers must be at least 21 years old and have held their licence for two years or more.',
    after: 'Additional drivers can be added at the counter for a daily fee. Trips abroad must be declared when the car is booked.',
  },
  {
    question: 'how fast is my connection',
    before:
      'Your contract runs for twenty-four months and then continues month by month until you cancel it. The router stays the property of the provider and must be returned when the contract ends. ' +
      'Installation is free when you order online, and a technician visit costs sixty euros otherwise. The customer portal shows your bills and data use.',
    answer: 'The line delivers download rates of up to 500 megabits per second and uploads of up to 50.',
    after: 'Speeds over Wi-Fi depend on the distance to the router and on walls in between. Faults are reported through the portal or by phone.',
  },
  {
    question: 'how many people fit at the barn for a wedding',
    before:
      'Hollow Barn sits on a working farm twenty minutes from the city, with parking for sixty cars. Couples may bring their own caterer, provided the caterer is insured and registered. ' +
      'Music must stop at midnight because of the neighbours, and fireworks are not permitted. The barn is heated in winter and the doors open onto the orchard in summer.',
    answer: 'The main hall seats 120 guests for dinner, or holds 180 standing at a reception.',
    after: 'A smaller room next to the hall can be used for children or as a quiet space. Viewings are arranged by appointment on weekday afternoons.',
  },
  {
    question: 'when is the coffee maker cleaned of limescale',
    before:
      'The kitchen on each floor is shared by everyone working there, so please leave it as you would like to find it. Dishes go into the dishwasher, not into the sink, and the dishwasher is started by whoever fills it. ' +
      'Milk in the fridge is bought by the office, everything else should carry your name. The fridge is emptied every Friday afternoon.',
    answer: 'The espresso machine is descaled every second Monday by the team whose name is on the rota that week.',
    after: 'The rota hangs on the inside of the cupboard door. Swap weeks with another team if you cannot make it.',
  },
  {
    question: 'where can runners get something to drink during the race',
    before:
      'Bib numbers are collected at the expo on the two days before the race, with a photo ID. The start is in three waves, ten minutes apart, assigned by your expected finishing time. ' +
      'Bags can be left at the cloakroom tent near the start and collected at the finish. The course closes six hours after the last wave starts.',
    answer: 'Drinks are handed out every five kilometres along the course, with gels at kilometres 20 and 30.',
    after: 'Medical tents are at the halfway point and at the finish. Headphones are allowed, but runners must be able to hear marshals.',
  },
  {
    question: 'what should I do when someone takes my debit card',
    before:
      'Your debit card can be used in shops and at cash machines in all countries that accept the network. Daily limits for cash and purchases can be changed in the app, and the change applies at once. ' +
      "Contactless payments above fifty euros ask for your PIN. Statements list every card payment with the merchant's name.",
    answer: 'If your card is stolen, block it right away in the app or call the 24-hour line on 0800 123 456.',
    after: 'A replacement card arrives by post within five working days. Disputed payments are investigated within thirty days.',
  },
  {
    question: 'can I let my puppy off the leash in the park',
    before:
      'The park opens at sunrise and closes at sunset; the gates are locked by the wardens. Barbecues are allowed only in the marked area by the lake, and ashes go in the metal bins. ' +
      'Cycling is permitted on the wide paths but not on the lawns. Ball games are welcome on the east meadow.',
    answer: 'Dogs must be kept on a lead near the playground and the pond, but may run free on the north field.',
    after: 'Owners must pick up after their dogs and use the bins at each gate. Swimming in the pond is forbidden for people and animals alike.',
  },
  {
    question: 'when must I submit my yearly tax declaration',
    before:
      'Self-employed people keep their own accounts and must keep receipts for ten years. Business expenses such as tools, training and a share of your phone bill reduce your taxable income. ' +
      'Quarterly advance payments are set by the tax office from your last assessment. An accountant can file on your behalf if you give them power of attorney.',
    answer: 'The annual income return is due by the thirty-first of July of the following year.',
    after: 'Late filing is charged a surcharge of up to ten percent of the tax due. Extensions are granted on request when an accountant files.',
  },
  {
    question: 'when can I visit the museum without paying',
    before:
      'The Harbour Museum tells the story of the port from the first fishing boats to container ships. Guided tours in English start at eleven and at three, and audio guides are available in six languages. ' +
      'Large bags must be left in the lockers by the entrance. The café on the top floor looks out over the docks.',
    answer: 'Admission is free for children under twelve and for everyone on the first Sunday of the month.',
    after: 'Tickets bought online skip the queue at the desk. Photography without flash is allowed in all galleries.',
  },
  {
    question: 'until what time can I stay in my hotel room on the last day',
    before:
      'Welcome to the Hotel Miramar; reception is staffed around the clock. Breakfast is served in the garden room from seven until half past ten, with a gluten-free buffet on request. ' +
      'The pool is open from eight until eight, and towels are provided at the pool bar. Taxis can be ordered at reception.',
    answer: 'Rooms must be vacated by eleven on the day of departure, and luggage can be stored until the evening.',
    after: 'Late departure until two can be booked for a fee, subject to availability. Parking in the garage costs fifteen euros a night.',
  },
];
